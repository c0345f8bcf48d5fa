/** The mail domain's route modules, by route group (see src/routes.ts). */
import type { AppContext } from '../../../context.js';
import type { App } from '../../../server.js';
import audienceRoutes from './audiences.js';
import broadcastRoutes from './broadcasts.js';
import dashboardMailRoutes from './dashboard.js';
import dashboardMailExtraRoutes from './dashboard-extra.js';
import logRoutes from './logs.js';
import sendBatchRoute from './send-batch.js';
import sendRoute from './send.js';
import templateRoutes from './templates.js';
import webhookRoute from './webhook.js';

export async function mailPublicRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const mod of [sendRoute, sendBatchRoute, logRoutes, audienceRoutes, broadcastRoutes, webhookRoute]) await mod(app, ctx);
}

export async function mailDashboardRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const mod of [dashboardMailRoutes, templateRoutes, dashboardMailExtraRoutes]) await mod(app, ctx);
}
