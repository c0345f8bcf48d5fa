/** The public schemas API under /api/schemas. */
import type { AppContext } from '../../context.js';
import type { App } from '../../server.js';
import createSchemaRoute from './routes/create.js';
import getSchemaRoute from './routes/get.js';

export default async function schemaRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const mod of [getSchemaRoute, createSchemaRoute]) await mod(app, ctx);
}
