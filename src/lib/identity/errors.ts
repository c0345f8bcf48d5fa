/**
 * Errors of the identity primitives shared by operators (dashboard accounts) and end users
 * (a project's app users): one code and one status for both, each caller keeping the
 * SDK's text for its audience (docs/errors.md).
 */
import { defineErrors } from '../errors.js';

export const IdentityErrors = defineErrors('identity', {
  invalid_credentials: { status: 401, message: 'Invalid email or password' },
  email_not_verified: { status: 403, message: 'Please verify your email before logging in.' },
  refresh_reused: { status: 403, message: 'Refresh token is invalid or already used' },
});
