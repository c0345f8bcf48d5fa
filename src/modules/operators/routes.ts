/** The dashboard account routes under /api/auth, one file per operation in ./routes/. */
import { defineRoutes } from '../../route-groups.js';
import loginRoute from './routes/login.js';
import otpRoutes from './routes/otp.js';
import passwordRoutes, { changePasswordRoute } from './routes/password.js';
import registerRoute from './routes/register.js';
import sessionRoutes, { meRoute } from './routes/session.js';

export default [
  defineRoutes('public', registerRoute, loginRoute, sessionRoutes, passwordRoutes, otpRoutes),
  defineRoutes('operator', meRoute, changePasswordRoute),
];
