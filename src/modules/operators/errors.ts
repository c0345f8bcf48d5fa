/** Errors of the operator (dashboard account) domain. Texts follow docs/wire-compatibility.md §10.2 where it has one. */
import { defineErrors } from '../../lib/errors.js';

export const OperatorErrors = defineErrors('operators', {
  email_exists: { status: 409, message: 'Email already exists' },
  incorrect_password: { status: 400, message: 'Incorrect current password' },
  operator_not_found: { status: 404, message: 'User not found' },
  no_refresh_token: { status: 401, message: 'No refresh token provided' },
  refresh_invalid: { status: 403, message: 'Invalid or expired refresh token' },
  otp_missing: { status: 400, message: 'No OTP found. Please request a new one.' },
  otp_incorrect: { status: 400, message: 'Incorrect OTP.' },
  otp_locked: { status: 429, message: 'Too many incorrect attempts. Please request a new OTP.' },
  admin_only: { status: 403, message: 'Access denied. Admin only.' },
  admin_email_not_verified: {
    status: 403,
    message: 'Email not verified. ADMIN_EMAIL gives admin rights once its email is verified: verify it with the OTP first.',
  },
  // GitHub sign-in at the console (github.ts): sent back to the console as `#/login?error=<code>`.
  github_not_configured: { status: 404, message: 'GitHub sign-in is not configured on this server (OPERATOR_GITHUB_CLIENT_ID and OPERATOR_GITHUB_CLIENT_SECRET).' },
  github_state_invalid: { status: 400, message: 'This GitHub sign-in expired, was already used or was started in another browser. Please start again.' },
  github_denied: { status: 403, message: 'GitHub sign-in was cancelled.' },
  github_email_unverified: { status: 403, message: 'Your GitHub account has no verified email address. Verify one at GitHub, then try again.' },
  github_linked_elsewhere: { status: 409, message: 'The Plinth account with this email is linked to another GitHub account.' },
  github_sign_in_failed: { status: 502, message: 'GitHub sign-in failed. Please try again.' },
  identity_not_found: { status: 404, message: 'No account of that provider is linked to yours.' },
  github_unlinked: {
    status: 403,
    message: 'GitHub sign-in was unlinked from the Plinth account with this email. Sign in with your password, then link GitHub again under Account.',
  },
  github_identity_taken: { status: 409, message: 'This GitHub account is linked to another Plinth account.' },
  github_already_linked: { status: 409, message: 'Your account is already linked to another GitHub account: unlink it first.' },
});
