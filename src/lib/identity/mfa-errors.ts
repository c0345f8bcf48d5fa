/**
 * Errors of second factors, for operators and end users alike (one code per condition for
 * both; docs/errors.md). A wrong code is 400, never 401: the SDK answers a 401 by refreshing
 * and retrying, which would spend a try for nothing.
 */
import { defineErrors } from '../errors.js';

export const MfaErrors = defineErrors('identity-mfa', {
  mfa_code_invalid: { status: 400, message: 'Invalid or expired code.' },
  mfa_challenge_invalid: { status: 400, message: 'The sign-in challenge is invalid, used or expired. Sign in again.' },
  mfa_locked: { status: 429, message: 'Too many wrong codes for this account. Try again later.' },
  mfa_code_required: { status: 403, message: 'This action needs a fresh code from your authenticator app or a recovery code.' },
  mfa_required: { status: 403, message: 'This action needs a session verified with a second factor (aal2).' },
  mfa_enrollment_required: { status: 403, message: 'A second factor is required: enrol an authenticator app or a passkey first.' },
  mfa_already_enrolled: { status: 409, message: 'An authenticator app is already enrolled. Remove it first.' },
  mfa_not_enrolled: { status: 404, message: 'No authenticator app enrolment in progress or enrolled.' },
});

/** Passkeys (WebAuthn), for operators and end users alike (the ceremony: passkey-ceremony.ts). */
export const PasskeyErrors = defineErrors('identity-passkeys', {
  passkey_invalid: { status: 400, message: 'The passkey response could not be verified.' },
  passkey_challenge_invalid: { status: 400, message: 'The passkey challenge is unknown, used or expired. Start again.' },
  passkey_counter_regressed: { status: 400, message: "The passkey's signature counter went backwards: it may have been cloned." },
  passkey_not_found: { status: 404, message: 'Passkey not found.' },
  passkey_name_invalid: { status: 400, message: 'A passkey name needs at least one visible character (100 at most).' },
});
