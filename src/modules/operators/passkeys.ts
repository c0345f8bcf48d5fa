/**
 * Operators' passkeys: the shared WebAuthn ceremony (src/lib/identity/passkey-ceremony.ts)
 * with the operators' adapter, for the console's relying party (relying-party.ts). Register
 * several (adding a factor to an account that has one needs an aal2 session), name, list,
 * rename, remove (a fresh second factor in the request, as for the authenticator app), and
 * sign in with one: discoverable (no email typed; user verification required; an aal2
 * session), or as the second factor of a password sign-in (mfa.ts).
 */
import type { AppContext } from '../../context.js';
import { randomId } from '../../lib/ids.js';
import { amrEntry, passkeyAssurance, withSecondFactor } from '../../lib/identity/assurance.js';
import { MfaErrors, PasskeyErrors } from '../../lib/identity/mfa-errors.js';
import { beginRegistration, beginSignin, checkAssertion, finishRegistration, passkeyName, accountAssertionOptions } from '../../lib/identity/passkey-ceremony.js';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '../../lib/identity/passkeys.js';
import { newRecoveryCodes } from '../../lib/identity/recovery-codes.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { OperatorIdentity } from './identity.js';
import { checkOperatorFactor, type OperatorProof } from './mfa.js';
import { replaceOperatorRecoveryCodes } from './mfa-queries.js';
import { insertPasskey, listPasskeys, OPERATOR_PASSKEYS, renamePasskey } from '../../lib/identity/passkey-queries.js';
import { deleteOperatorPasskey, findLiveOperatorChallenge, setOperatorMfaWebauthnChallenge } from './passkey-queries.js';
import { operatorPasskeyStore } from './passkey-store.js';
import { consoleRelyingParty } from './relying-party.js';
import { issueSession, type IssuedSession } from './sessions.js';

const counterAudit = (ctx: AppContext) => (p: { id: string; ownerId: string }) =>
  ctx.log.warn({ audit: 'operator.passkey.counter_regressed', operatorId: p.ownerId, passkeyId: p.id }, 'audit: an operator passkey counter went backwards');

/** Options for navigator.credentials.create(); an operator who has a factor must be at aal2. */
export async function operatorPasskeyRegistrationOptions(ctx: AppContext, operator: OperatorIdentity) {
  if (operator.hasSecondFactor && operator.aal !== 'aal2') throw MfaErrors.mfa_required();
  return beginRegistration(operatorPasskeyStore(ctx.db.admin), consoleRelyingParty(ctx), { id: operator.id, name: operator.email }, ctx.clock.now());
}

/**
 * Stores the authenticator's new credential under a name. The operator's first second factor
 * brings ten recovery codes (shown once) and a new aal2 session (as confirming an app does).
 */
export async function registerOperatorPasskey(
  ctx: AppContext, operator: OperatorIdentity, name: string | undefined, response: RegistrationResponseJSON,
): Promise<{ passkey: { id: string; name: string }; recoveryCodes?: string[]; session?: IssuedSession }> {
  if (operator.hasSecondFactor && operator.aal !== 'aal2') throw MfaErrors.mfa_required();
  const label = passkeyName(name, 'Passkey');
  const rp = consoleRelyingParty(ctx);
  const now = ctx.clock.now();
  const credential = await finishRegistration(operatorPasskeyStore(ctx.db.admin), rp, operator.id, response, now);
  const id = randomId();
  if (!(await insertPasskey(ctx.db.admin, OPERATOR_PASSKEYS, {}, { id, ownerId: operator.id, ...credential, rpId: rp.rpId, name: label, now }))) {
    throw PasskeyErrors.passkey_invalid('This passkey is already registered.');
  }
  ctx.log.info({ audit: 'operator.passkey.added', operatorId: operator.id, passkeyId: id }, 'audit: an operator registered a passkey');
  if (operator.hasSecondFactor) return { passkey: { id, name: label } };
  const { codes, hashes } = newRecoveryCodes(ctx.config.encryptionKey, 'operator', operator.id);
  await replaceOperatorRecoveryCodes(ctx.db.admin, operator.id, hashes, now);
  const session = await issueSession(ctx, operator.id, undefined, withSecondFactor([amrEntry('pwd', now)], 'passkey', now));
  return { passkey: { id, name: label }, recoveryCodes: codes, session };
}

export async function myOperatorPasskeys(ctx: AppContext, operator: OperatorIdentity) {
  const rows = await listPasskeys(ctx.db.admin, OPERATOR_PASSKEYS, operator.id);
  return rows.map((p) => ({ id: p.id, name: p.name, createdAt: p.created_at, lastUsedAt: p.last_used_at, backedUp: p.backed_up }));
}

export async function renameOperatorPasskeyOf(ctx: AppContext, operator: OperatorIdentity, id: string, name: string): Promise<void> {
  const label = passkeyName(name);
  if (!(await renamePasskey(ctx.db.admin, OPERATOR_PASSKEYS, operator.id, id, label))) throw PasskeyErrors.passkey_not_found();
}

/** Removes a passkey after a fresh second factor; the last factor gone takes the recovery codes and aal2 with it. */
export async function removeOperatorPasskey(ctx: AppContext, operator: OperatorIdentity, id: string, proof: OperatorProof): Promise<void> {
  const mine = await listPasskeys(ctx.db.admin, OPERATOR_PASSKEYS, operator.id);
  if (!mine.some((p) => p.id === id)) throw PasskeyErrors.passkey_not_found();
  await checkOperatorFactor(ctx, operator.id, proof);
  if (!(await deleteOperatorPasskey(ctx.db.admin, operator.id, id))) throw PasskeyErrors.passkey_not_found();
  ctx.log.info({ audit: 'operator.passkey.removed', operatorId: operator.id, passkeyId: id }, 'audit: an operator removed a passkey');
}

/** Options for a discoverable sign-in at the console, the challenge stored for one use. */
export function operatorPasskeySigninOptions(ctx: AppContext) {
  return beginSignin(operatorPasskeyStore(ctx.db.admin), consoleRelyingParty(ctx), ctx.clock.now());
}

/** A discoverable sign-in: the operator the passkey belongs to, and an aal2 session. */
export async function signInOperatorWithPasskey(ctx: AppContext, response: AuthenticationResponseJSON): Promise<{ operatorId: string; session: IssuedSession }> {
  const now = ctx.clock.now();
  const out = await checkAssertion(operatorPasskeyStore(ctx.db.admin), consoleRelyingParty(ctx), response, { ownerId: null, onCounterRegressed: counterAudit(ctx) }, now);
  if (!out.ok) throw out.reason === 'challenge' ? PasskeyErrors.passkey_challenge_invalid() : PasskeyErrors.passkey_invalid();
  if (!out.userVerified) throw PasskeyErrors.passkey_invalid('Passkey sign-in needs user verification (PIN or biometric).');
  return { operatorId: out.passkey.ownerId, session: await issueSession(ctx, out.passkey.ownerId, undefined, passkeyAssurance(true, now)) };
}

/** Options to complete a password sign-in's challenge with one of the operator's passkeys (kept with the challenge). */
export async function operatorMfaPasskeyOptions(ctx: AppContext, challengeId: string) {
  const idHash = sha256Hex(challengeId);
  const now = ctx.clock.now();
  const c = await findLiveOperatorChallenge(ctx.db.admin, idHash, now);
  if (!c) throw MfaErrors.mfa_challenge_invalid();
  const options = await accountAssertionOptions(operatorPasskeyStore(ctx.db.admin), consoleRelyingParty(ctx), c.operator_id);
  if (!(await setOperatorMfaWebauthnChallenge(ctx.db.admin, idHash, options.challenge, now))) throw MfaErrors.mfa_challenge_invalid();
  return options;
}
