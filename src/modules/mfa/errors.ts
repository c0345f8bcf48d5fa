/** Errors of end users' passkeys (the second-factor errors shared with operators: src/lib/identity/mfa-errors.ts). */
import { defineErrors } from '../../lib/errors.js';

export const PasskeyErrors = defineErrors('mfa', {
  passkeys_not_configured: { status: 422, message: 'Passkeys are not set up for this project: set its relying party id and origins first.' },
  passkey_invalid: { status: 400, message: 'The passkey response could not be verified.' },
  passkey_challenge_invalid: { status: 400, message: 'The passkey challenge is unknown, used or expired. Start again.' },
  passkey_counter_regressed: { status: 400, message: "The passkey's signature counter went backwards: it may have been cloned." },
  passkey_not_found: { status: 404, message: 'Passkey not found.' },
});
