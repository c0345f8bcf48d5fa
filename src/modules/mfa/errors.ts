/**
 * Errors of end users' passkeys: the project's relying party; the rest (shared with operators)
 * are in src/lib/identity/mfa-errors.ts.
 */
import { defineErrors } from '../../lib/errors.js';
import { PasskeyErrors as SharedPasskeyErrors } from '../../lib/identity/mfa-errors.js';

const ProjectPasskeyErrors = defineErrors('mfa', {
  passkeys_not_configured: { status: 422, message: 'Passkeys are not set up for this project: set its relying party id and origins first.' },
});

export const PasskeyErrors = { ...SharedPasskeyErrors, ...ProjectPasskeyErrors };
