/** The dashboard project routes under /api/projects (collections are the data engineer's). */
import { defineRoutes } from '../../route-groups.js';
import createRoute from './routes/create.js';
import deleteRoute from './routes/delete.js';
import readRoutes from './routes/read.js';
import rotateKeyRoute from './routes/rotate-key.js';
import updateRoute from './routes/update.js';
import usageRoute from './routes/usage.js';

export default [
  defineRoutes('operator', readRoutes, updateRoute, usageRoute),
  // Creating, deleting and re-keying a project need a verified email.
  defineRoutes('verifiedOperator', createRoute, deleteRoute, rotateKeyRoute),
];
