/** The storage route modules: the public API (`/api/storage/*`) and the dashboard routes. */
import type { AppContext } from '../../../context.js';
import type { App } from '../../../server.js';
import deleteFileRoute from './delete-file.js';
import publicFileRoute from './public-file.js';
import putObjectRoute from './put-object.js';
import uploadConfirmRoute from './upload-confirm.js';
import uploadRequestRoute from './upload-request.js';

export default async function storageRoutes(app: App, ctx: AppContext): Promise<void> {
  await uploadRequestRoute(app, ctx);
  await uploadConfirmRoute(app, ctx);
  await deleteFileRoute(app, ctx);
  await putObjectRoute(app, ctx);
  await publicFileRoute(app, ctx);
}

export { default as storageDashboardRoutes } from './dashboard.js';
export { default as storageDashboardFileRoutes } from './dashboard-files.js';
