/** The dashboard collection routes under /api/projects/:projectId/collections. */
import { defineRoutes } from '../../../route-groups.js';
import createRoute from './create.js';
import deleteRoute from './delete.js';
import readRoutes from './read.js';
import realtimeRoute from './realtime.js';
import rlsRoute from './rls.js';
import updateRoute from './update.js';

export default [defineRoutes('operator', createRoute, readRoutes, updateRoute, rlsRoute, realtimeRoute, deleteRoute)];
