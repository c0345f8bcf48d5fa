/** The dashboard project routes under /api/projects (collections are the data engineer's). */
import { defineRoutes } from '../../../route-groups.js';
import createRoute from './create.js';
import deleteRoute from './delete.js';
import readRoutes from './read.js';
import rotateKeyRoute from './rotate-key.js';
import updateRoute from './update.js';
import usageRoute from './usage.js';

export default [
  defineRoutes('operator', readRoutes, updateRoute, usageRoute),
  // Creating, deleting and re-keying a project need a verified email.
  defineRoutes('verifiedOperator', createRoute, deleteRoute, rotateKeyRoute),
];
