/** OpenAPI 3 document generated from the TypeBox route schemas, browsable at /docs. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

export async function registerDocs(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Plinth API',
        version: '0.1.0',
        description:
          'Public API (x-api-key: pk_live_… / sk_live_…) and dashboard API (operator session: Bearer or cookie). ' +
          'Success bodies are {success, data, message}; errors are {success:false, data:{}, message, error, code}.',
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          userBearer: { type: 'http', scheme: 'bearer', description: 'End-user access token' },
          operatorBearer: { type: 'http', scheme: 'bearer', description: 'Dashboard (operator) token' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}
