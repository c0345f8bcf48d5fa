/** The public data API under /api/data/:collectionName. */
import type { AppContext } from '../../context.js';
import type { App } from '../../server.js';
import aggregateRoutes from './routes/aggregate.js';
import batchRoutes from './routes/batch.js';
import createRoutes from './routes/create.js';
import deleteRoutes from './routes/delete.js';
import guardRoute from './routes/guard.js';
import readRoutes from './routes/read.js';
import updateRoutes from './routes/update.js';

export default async function dataRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const mod of [readRoutes, aggregateRoutes, batchRoutes, createRoutes, updateRoutes, deleteRoutes, guardRoute]) await mod(app, ctx);
}
