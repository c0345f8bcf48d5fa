/** The storage route modules: the public API (`/api/storage/*`) and the dashboard routes. */
import { defineRoutes } from '../../../route-groups.js';
import dashboardFileRoutes from './dashboard-files.js';
import dashboardRoutes from './dashboard.js';
import deleteFileRoute from './delete-file.js';
import publicFileRoute from './public-file.js';
import putObjectRoute from './put-object.js';
import renderRoute from './render.js';
import privateFileRoutes from './private-files.js';
import resumableRoutes from './resumable.js';
import uploadConfirmRoute from './upload-confirm.js';
import uploadRequestRoute from './upload-request.js';

export const storagePublicRoutes = [
  defineRoutes('apiKey', uploadRequestRoute, uploadConfirmRoute, deleteFileRoute, resumableRoutes, privateFileRoutes),
  // A signed URL (or a public path) is the credential.
  defineRoutes('public', putObjectRoute, publicFileRoute, renderRoute),
];

export const storageDashboardRoutes = [defineRoutes('operator', dashboardRoutes, dashboardFileRoutes)];
