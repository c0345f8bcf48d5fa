/** Stable error codes of social sign-in and its dashboard settings (docs/wire-compatibility.md §2.17, §10.6). */
import { defineErrors } from '../../lib/errors.js';

export const SocialErrors = defineErrors('social', {
  unsupported_provider: { status: 404, message: 'Unsupported social auth provider' },
  provider_not_configured: { status: 422, message: 'Social auth provider is disabled or incomplete for this project.' },
  invalid_state: { status: 400, message: 'Invalid or expired OAuth state' },
  site_url_missing: { status: 400, message: 'This project has no Site URL configured for social sign-in.' },
  identity_taken: { status: 409, message: 'This identity is already linked to another account.' },
  link_state_mismatch: { status: 403, message: 'This link was started by another user.' },
  no_email: { status: 422, message: 'The provider did not return an email address for this account.' },
  exchange_missing: { status: 400, message: 'rtCode and token are required' },
  exchange_invalid: { status: 400, message: 'Invalid or expired refresh token exchange code' },
  exchange_mismatch: { status: 403, message: 'Invalid refresh token exchange payload' },
  providers_empty: { status: 400, message: 'Provide at least one social auth provider config.' },
  client_secret_empty: { status: 400, message: 'clientSecret cannot be empty when provided.' },
  provider_incomplete: { status: 422, message: 'Incomplete provider config' },
  provider_site_url: { status: 422, message: 'siteUrl required' },
  oidc_provider_invalid: { status: 422, message: 'Invalid OpenID Connect provider settings.' },
  oidc_provider_missing: { status: 404, message: 'No OpenID Connect provider with this id in the project.' },
  oidc_provider_limit: { status: 422, message: 'A project can have at most 20 OpenID Connect providers.' },
  oidc_discovery_failed: { status: 502, message: 'The OpenID Connect provider could not be reached or its discovery document is invalid.' },
});
