/** Errors of the request-authentication plugins (api key, operator session, end-user token). */
import { defineErrors } from '../errors.js';

export const RequestAuthErrors = defineErrors('request-auth', {
  no_token: { status: 401, message: 'Access Denied: No Token Provided' },
  invalid_token: { status: 401, message: 'Invalid Token' },
  csrf_invalid: { status: 403, message: 'The form has expired or the CSRF token is invalid. Please refresh the page and try again.' },
  api_key_missing: { status: 401, message: 'API key not found' },
  api_key_invalid: { status: 401, message: 'API key is expired or invalid.' },
  owner_not_verified: { status: 401, message: 'Owner not verified' },
  secret_key_required: { status: 403, message: 'Forbidden. This action requires a Secret Key (sk_live_...).' },
});
