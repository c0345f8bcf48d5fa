/**
 * Which route modules each route group serves. A node serves the public API, the dashboard
 * API or both (PLINTH_ROUTES). Each module exports `(app, ctx) => Promise<void>`.
 */
import type { AppContext } from './context.js';
import type { App } from './server.js';
import healthRoutes from './modules/health/routes.js';
import operatorRoutes from './modules/operators/routes.js';
import projectRoutes from './modules/projects/routes.js';
import adminRoutes from './modules/admin/routes.js';

export type RouteModule = (app: App, ctx: AppContext) => Promise<void>;

export const commonRoutes: RouteModule[] = [healthRoutes];

export const publicRoutes: RouteModule[] = [];

export const dashboardRoutes: RouteModule[] = [operatorRoutes, projectRoutes, adminRoutes];
