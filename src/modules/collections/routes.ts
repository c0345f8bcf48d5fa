/** The dashboard collection routes under /api/projects/:projectId/collections. */
import type { AppContext } from '../../context.js';
import type { App } from '../../server.js';
import createRoute from './routes/create.js';
import deleteRoute from './routes/delete.js';
import readRoutes from './routes/read.js';
import rlsRoute from './routes/rls.js';
import updateRoute from './routes/update.js';

export default async function collectionRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const mod of [createRoute, readRoutes, updateRoute, rlsRoute, deleteRoute]) await mod(app, ctx);
}
