/** Public end-user auth routes (/api/userAuth/*): one module per user-facing flow, and user administration with the secret key. */
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { defineRoutes } from '../../../route-groups.js';
import { authPreconditions } from '../schema.js';
import loginFlow from './login.js';
import logoutFlow from './logout.js';
import passwordResetFlow from './password-reset.js';
import { accountFlow, publicProfileFlow } from './profile.js';
import refreshFlow from './refresh.js';
import signupFlow from './signup.js';
import verifyEmailFlow from './verify-email.js';
import passwordlessFlow from './passwordless.js';
import { anonymousLinkFlow, anonymousSignInFlow } from './anonymous.js';
import ownSessionsFlow from './own-sessions.js';
import adminUsersFlow from './admin-users.js';
import { warmPasswords } from '../../../lib/passwords.js';

/** Every /api/userAuth route first checks that Auth is enabled with a valid users schema. */
async function preconditions(app: App, ctx: AppContext): Promise<void> {
  warmPasswords();
  app.addHook('preHandler', authPreconditions(ctx));
}

export default [
  defineRoutes('apiKey', preconditions, signupFlow, loginFlow, refreshFlow, logoutFlow, publicProfileFlow, verifyEmailFlow, passwordResetFlow, passwordlessFlow, anonymousSignInFlow),
  defineRoutes('endUser', preconditions, accountFlow, anonymousLinkFlow, ownSessionsFlow),
  // User administration: the secret key only, whether or not sign-in is enabled (user-admin.ts).
  defineRoutes('secretKey', adminUsersFlow),
];
