/** The dashboard project routes under /api/projects (collections are the data engineer's). */
import type { AppContext } from '../../context.js';
import type { App } from '../../server.js';
import createRoute from './routes/create.js';
import deleteRoute from './routes/delete.js';
import readRoutes from './routes/read.js';
import rotateKeyRoute from './routes/rotate-key.js';
import updateRoute from './routes/update.js';
import usageRoute from './routes/usage.js';

export default async function projectRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const mod of [createRoute, readRoutes, updateRoute, deleteRoute, rotateKeyRoute, usageRoute]) await mod(app, ctx);
}
