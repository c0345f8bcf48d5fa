/** The mail domain's route modules, by route group (see src/routes.ts). */
import { defineRoutes } from '../../../route-groups.js';
import audienceRoutes from './audiences.js';
import authTemplateRoutes from './auth-templates.js';
import broadcastRoutes from './broadcasts.js';
import dashboardMailRoutes from './dashboard.js';
import dashboardMailExtraRoutes from './dashboard-extra.js';
import logRoutes from './logs.js';
import sendBatchRoute from './send-batch.js';
import sendRoute from './send.js';
import templateRoutes from './templates.js';
import webhookRoute from './webhook.js';

export const mailPublicRoutes = [
  defineRoutes('secretKey', sendRoute, sendBatchRoute, logRoutes, audienceRoutes, broadcastRoutes),
  // The provider's signature (svix) is the credential.
  defineRoutes('public', webhookRoute),
];

export const mailDashboardRoutes = [defineRoutes('operator', dashboardMailRoutes, templateRoutes, authTemplateRoutes, dashboardMailExtraRoutes)];
