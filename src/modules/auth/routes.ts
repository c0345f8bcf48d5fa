/** Public end-user auth routes (/api/userAuth/*): one module per user-facing flow. */
import type { AppContext } from '../../context.js';
import type { App } from '../../server.js';
import loginFlow from './flows/login.js';
import logoutFlow from './flows/logout.js';
import passwordResetFlow from './flows/password-reset.js';
import profileFlow from './flows/profile.js';
import refreshFlow from './flows/refresh.js';
import signupFlow from './flows/signup.js';
import verifyEmailFlow from './flows/verify-email.js';
import { warmPasswords } from '../../lib/passwords.js';

export default async function authRoutes(app: App, ctx: AppContext): Promise<void> {
  warmPasswords();
  for (const flow of [signupFlow, loginFlow, refreshFlow, logoutFlow, profileFlow, verifyEmailFlow, passwordResetFlow]) {
    await flow(app, ctx);
  }
}
