/** The public data API under /api/data/:collectionName. */
import { defineRoutes } from '../../route-groups.js';
import aggregateRoutes from './routes/aggregate.js';
import batchRoutes from './routes/batch.js';
import createRoutes from './routes/create.js';
import deleteRoutes from './routes/delete.js';
import guardRoute from './routes/guard.js';
import readRoutes from './routes/read.js';
import updateRoutes from './routes/update.js';

export default [defineRoutes('apiKey', readRoutes, aggregateRoutes, batchRoutes, createRoutes, updateRoutes, deleteRoutes, guardRoute)];
