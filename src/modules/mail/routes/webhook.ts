/**
 * POST /api/mail/webhook: Resend delivery events, Svix-signed. Registered in its own
 * encapsulated plugin whose JSON parser keeps the raw bytes (a Buffer), so the signature is
 * checked on exactly what was sent, before anything is parsed.
 */
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { handleWebhook } from '../webhook.js';

const Answer = Type.Object({ success: Type.Boolean(), message: Type.String() });

export default async function webhookRoute(app: App, ctx: AppContext): Promise<void> {
  await app.register(async (raw) => {
    const scope = raw.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.post(
      '/api/mail/webhook',
      {
        schema: {
          tags: ['mail'],
          summary: 'Inbound delivery events from Resend (Svix-signed)',
          querystring: Type.Object({
            projectId: Type.Optional(Type.String({ description: "Own-key projects: verify with this project's webhook secret" })),
          }),
          response: { 200: Answer, 400: Answer },
        },
      },
      async (req, reply) => {
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const answer = await handleWebhook(ctx, body, req.headers, req.query.projectId);
        return reply.status(answer.status).send(answer.body);
      },
    );
  });
}
