/** The dashboard routes of access rules, under /api/projects/:projectId/collections/:name/rules. */
import { defineRoutes } from '../../../route-groups.js';
import previewRoute from './preview.js';
import rulesRoute from './rules.js';

export default [defineRoutes('operator', rulesRoute, previewRoute)];
