/**
 * Which route modules each surface serves, and in which authentication group (src/route-groups.ts).
 * A node serves the public API, the dashboard API or both (PLINTH_ROUTES). Domains with routes
 * of several kinds export their groups from their routes index; the others are grouped here.
 */
import type { AppContext } from './context.js';
import type { Surface } from './plugins/cors.js';
import type { App } from './app.js';
import { defineRoutes, registerAuthGroups, type RouteModule } from './route-groups.js';
import healthRoutes from './modules/health/routes/index.js';
import operatorRoutes from './modules/operators/routes/index.js';
import projectRoutes from './modules/projects/routes/index.js';
import adminRoutes from './modules/admin/routes/index.js';
import aiRoutes from './modules/ai/routes/index.js';
import { storageDashboardRoutes, storagePublicRoutes } from './modules/storage/routes/index.js';
import authRoutes from './modules/auth/routes/index.js';
import authAdminRoutes from './modules/auth/routes/project-users.js';
import socialRoutes from './modules/social/routes/index.js';
import { mfaDashboardRoutes, mfaPublicRoutes } from './modules/mfa/routes/index.js';
import socialSettingsRoutes from './modules/social/routes/providers.js';
import oidcSettingsRoutes from './modules/social/routes/oidc-settings.js';
import { mailDashboardRoutes, mailPublicRoutes } from './modules/mail/routes/index.js';
import collectionRoutes from './modules/collections/routes/index.js';
import rulesRoutes from './modules/rules/routes/index.js';
import dataRoutes from './modules/data/routes/index.js';
import dataOperatorRoutes from './modules/data/operator/index.js';
import schemaRoutes from './modules/schemas/routes/index.js';
import backupRoutes from './modules/backup/routes/index.js';
import backupScheduleRoutes from './modules/backup/routes/backups.js';
import realtimeRoutes from './modules/realtime/routes/index.js';
import webhookRoutes from './modules/webhooks/routes/index.js';
import logRoutes from './modules/logs/routes/index.js';
import { functionsDashboardRoutes, functionsPublicRoutes } from './modules/functions/routes/index.js';
import databaseInsightRoutes from './modules/database-insight/routes/index.js';
import auditRoutes from './modules/audit/routes/index.js';
import memberRoutes from './modules/members/routes/index.js';
import usageRoutes from './modules/usage/routes/index.js';
import { registerAuditHooks } from './modules/audit/http.js';

export type { RouteModule } from './route-groups.js';

export const commonRoutes: RouteModule[] = [defineRoutes('public', healthRoutes)];

export const publicRoutes: RouteModule[] = [...authRoutes, ...mfaPublicRoutes, ...socialRoutes, ...storagePublicRoutes, ...mailPublicRoutes, ...dataRoutes, ...schemaRoutes, ...realtimeRoutes, ...functionsPublicRoutes];

export const dashboardRoutes: RouteModule[] = [
  ...operatorRoutes,
  ...projectRoutes,
  defineRoutes('admin', adminRoutes),
  ...aiRoutes,
  ...storageDashboardRoutes,
  defineRoutes('operator', authAdminRoutes, socialSettingsRoutes, oidcSettingsRoutes, backupRoutes, backupScheduleRoutes),
  ...mfaDashboardRoutes,
  ...mailDashboardRoutes,
  ...collectionRoutes,
  ...rulesRoutes,
  ...dataOperatorRoutes,
  ...webhookRoutes,
  ...logRoutes,
  ...functionsDashboardRoutes,
  ...databaseInsightRoutes,
  ...auditRoutes,
  ...memberRoutes,
  ...usageRoutes,
];

/**
 * Registers a surface's modules in their own scope, stamping each route with the surface
 * (`config.surface`): CORS and anything else that depends on "which kind of route is this"
 * reads it from the routed route, never from the URL.
 */
export async function registerRouteGroup(app: App, ctx: AppContext, surface: Surface, modules: RouteModule[]): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, surface };
    });
    // The audit log of operator changes (src/modules/audit/http.ts): the dashboard's routes only.
    if (surface === 'dashboard') registerAuditHooks(scope, ctx);
    await registerAuthGroups(scope, ctx, modules);
  });
}
