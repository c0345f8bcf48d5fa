/** The dashboard collection routes under /api/projects/:projectId/collections. */
import { defineRoutes } from '../../route-groups.js';
import createRoute from './routes/create.js';
import deleteRoute from './routes/delete.js';
import readRoutes from './routes/read.js';
import rlsRoute from './routes/rls.js';
import updateRoute from './routes/update.js';

export default [defineRoutes('operator', createRoute, readRoutes, updateRoute, rlsRoute, deleteRoute)];
