/** The dashboard account routes under /api/auth, one file per operation in ./routes/. */
import type { AppContext } from '../../context.js';
import type { App } from '../../server.js';
import loginRoute from './routes/login.js';
import otpRoutes from './routes/otp.js';
import passwordRoutes from './routes/password.js';
import registerRoute from './routes/register.js';
import sessionRoutes from './routes/session.js';

export default async function operatorRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const mod of [registerRoute, loginRoute, sessionRoutes, passwordRoutes, otpRoutes]) await mod(app, ctx);
}
