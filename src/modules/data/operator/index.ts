/** The dashboard's data routes under /api/projects/:projectId/data/:collectionName. */
import { defineRoutes } from '../../../route-groups.js';
import operatorAggregateRoutes from './aggregate.js';
import operatorBatchRoutes from './batch.js';
import operatorReadRoutes from './read.js';
import operatorTransferRoutes from './transfer.js';
import operatorWriteRoutes from './write.js';

export default [defineRoutes('operator', operatorBatchRoutes, operatorTransferRoutes, operatorReadRoutes, operatorAggregateRoutes, operatorWriteRoutes)];
