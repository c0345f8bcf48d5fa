/** The dashboard's log routes under /api/projects/:projectId/logs. */
import { defineRoutes } from '../../../route-groups.js';
import requestLogRoutes from './requests.js';

export default [defineRoutes('operator', requestLogRoutes)];
