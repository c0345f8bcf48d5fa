/** The dashboard's data routes under /api/projects/:projectId/data/:collectionName. */
import type { AppContext } from '../../../context.js';
import type { App } from '../../../server.js';
import operatorAggregateRoutes from './aggregate.js';
import operatorReadRoutes from './read.js';
import operatorTransferRoutes from './transfer.js';
import operatorWriteRoutes from './write.js';

export default async function dataOperatorRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const mod of [operatorTransferRoutes, operatorReadRoutes, operatorAggregateRoutes, operatorWriteRoutes]) await mod(app, ctx);
}
