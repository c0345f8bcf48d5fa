/**
 * The database view's routes (docs/dashboard.md, "Database"): a project's policies, indexes,
 * tables and slowest statements under /api/projects/:projectId/database (its owner), and the
 * migrations with their checksums under /api/admin/database (the platform admin only).
 */
import { defineRoutes } from '../../../route-groups.js';
import projectDatabaseRoutes from './project.js';
import migrationRoutes from './migrations.js';

export default [defineRoutes('operator', projectDatabaseRoutes), defineRoutes('admin', migrationRoutes)];
