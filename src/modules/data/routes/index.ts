/** The public data API under /api/data/:collectionName. */
import { defineRoutes } from '../../../route-groups.js';
import aggregateRoutes from './aggregate.js';
import batchRoutes from './batch.js';
import createRoutes from './create.js';
import deleteRoutes from './delete.js';
import guardRoute from './guard.js';
import readRoutes from './read.js';
import updateRoutes from './update.js';

export default [defineRoutes('apiKey', readRoutes, aggregateRoutes, batchRoutes, createRoutes, updateRoutes, deleteRoutes, guardRoute)];
