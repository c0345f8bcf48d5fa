/** The dashboard's usage history and alert routes under /api/projects/:projectId/usage. */
import { defineRoutes } from '../../../route-groups.js';
import usageAlertRoutes from './alerts.js';
import usageHistoryRoute from './history.js';

export default [defineRoutes('operator', usageHistoryRoute, usageAlertRoutes)];
