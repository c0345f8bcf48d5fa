/** The dashboard account routes under /api/auth, one file per operation in ./routes/. */
import { defineRoutes } from '../../../route-groups.js';
import operatorGithubRoutes from './github.js';
import loginRoute from './login.js';
import { operatorMfaRoutes, operatorMfaVerifyRoute } from './mfa.js';
import otpRoutes from './otp.js';
import operatorSessionRoutes from './own-sessions.js';
import operatorIdentityRoutes from './identities.js';
import { operatorPasskeyRoutes, operatorPasskeySigninRoutes } from './passkeys.js';
import passwordRoutes, { changePasswordRoute } from './password.js';
import registerRoute from './register.js';
import sessionRoutes, { meRoute } from './session.js';

export default [
  defineRoutes('public', registerRoute, loginRoute, sessionRoutes, passwordRoutes, otpRoutes, operatorMfaVerifyRoute, operatorPasskeySigninRoutes, operatorGithubRoutes),
  defineRoutes('operator', meRoute, changePasswordRoute, operatorMfaRoutes, operatorPasskeyRoutes, operatorSessionRoutes, operatorIdentityRoutes),
];
