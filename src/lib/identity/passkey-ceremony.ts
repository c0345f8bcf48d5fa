/**
 * The WebAuthn ceremonies, for operators and end users alike, over a PasskeyStore adapter (the
 * account's table of passkeys and of ceremonies in flight: passkeyStore() of passkey-queries.ts,
 * over end users' tables or operators'). The cryptography is in
 * passkeys.ts; this is the order of the checks around it:
 *  - registration: options with a stored single-use challenge bound to the account, then the
 *    response must sign that challenge (taken out first), verified against the relying party;
 *  - assertion: the signed challenge must be the expected one (an MFA challenge's) or a live
 *    sign-in challenge of this store (taken out: single use); the credential must be in this
 *    store (a credential of another relying party is simply unknown) and belong to the expected
 *    account; the signature is verified, then a counter that did not grow is refused (and
 *    reported: a cloned authenticator), and the use is recorded only if the counter still grew,
 *    so two concurrent uses of one assertion cannot both pass.
 */
import { PasskeyErrors } from './mfa-errors.js';
import {
  authenticationOptions, PASSKEY_CHALLENGE_TTL_SECONDS, registrationOptions, signedChallenge, verifyAssertion, verifyRegistration,
  type AuthenticationResponseJSON, type RegistrationResponseJSON, type RelyingParty, type StoredPasskey,
} from './passkeys.js';

export type CeremonyPurpose = 'register' | 'signin';

/** A stored passkey with its row id and its account. */
export interface PasskeyRecord extends StoredPasskey {
  id: string;
  ownerId: string;
}

export interface PasskeyStore {
  /** The account's passkeys (excluded at registration, allowed at a second-factor assertion). */
  list(ownerId: string): Promise<StoredPasskey[]>;
  findByCredential(credentialId: string): Promise<PasskeyRecord | undefined>;
  /** Records a verified use only if the counter grew (or stays 0); false otherwise. */
  recordUse(id: string, counter: number, backedUp: boolean, now: Date): Promise<boolean>;
  insertChallenge(c: { challenge: string; purpose: CeremonyPurpose; ownerId: string | null; expiresAt: Date }): Promise<void>;
  /** Takes a ceremony's challenge out (single use); false when unknown, of another purpose or account, or expired. */
  takeChallenge(challenge: string, purpose: CeremonyPurpose, ownerId: string | null, now: Date): Promise<boolean>;
}

/** A stored row (either table: same columns) as the primitive reads it. */
export const storedPasskeyOf = (p: { credential_id: string; public_key?: string; counter?: string | number; transports: string[]; backup_eligible: boolean }): StoredPasskey => ({
  credentialId: p.credential_id, publicKey: p.public_key ?? '', counter: Number(p.counter ?? 0), transports: p.transports, backupEligible: p.backup_eligible,
});

export const challengeExpiry = (now: Date) => new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_SECONDS * 1000);

/** Options for navigator.credentials.create(), the challenge stored for this account, once. */
export async function beginRegistration(store: PasskeyStore, rp: RelyingParty, owner: { id: string; name: string }, now: Date) {
  const options = await registrationOptions(rp, owner, await store.list(owner.id));
  await store.insertChallenge({ challenge: options.challenge, purpose: 'register', ownerId: owner.id, expiresAt: challengeExpiry(now) });
  return options;
}

/** The verified new credential (the caller stores it under a name), or 400 `passkey_challenge_invalid` / `passkey_invalid`. */
export async function finishRegistration(store: PasskeyStore, rp: RelyingParty, ownerId: string, response: RegistrationResponseJSON, now: Date) {
  const challenge = signedChallenge(response);
  if (!challenge || !(await store.takeChallenge(challenge, 'register', ownerId, now))) throw PasskeyErrors.passkey_challenge_invalid();
  const credential = await verifyRegistration(rp, response, challenge);
  if (!credential) throw PasskeyErrors.passkey_invalid();
  return credential;
}

/** Options for a discoverable sign-in (no allowCredentials), the challenge stored, once. */
export async function beginSignin(store: PasskeyStore, rp: RelyingParty, now: Date) {
  const options = await authenticationOptions(rp, []);
  await store.insertChallenge({ challenge: options.challenge, purpose: 'signin', ownerId: null, expiresAt: challengeExpiry(now) });
  return options;
}

/** Options for one account's passkeys (a second factor); the caller keeps the challenge where it expects it. */
export async function accountAssertionOptions(store: PasskeyStore, rp: RelyingParty, ownerId: string) {
  const mine = await store.list(ownerId);
  if (!mine.length) throw PasskeyErrors.passkey_not_found('No passkey is registered for this account.');
  return authenticationOptions(rp, mine);
}

export type AssertionOutcome =
  | { ok: true; passkey: PasskeyRecord; userVerified: boolean }
  | { ok: false; reason: 'challenge' | 'invalid' };

export interface AssertionExpectation {
  /** The challenge it must sign (an MFA challenge's); without it, a live sign-in challenge of the store, taken once. */
  challenge?: string | null;
  /** The account it must belong to; null: any account of the store (a discoverable sign-in). */
  ownerId: string | null;
  /** Told of a counter that went backwards (an audit line) before 400 `passkey_counter_regressed`. */
  onCounterRegressed: (passkey: PasskeyRecord) => void;
}

export async function checkAssertion(
  store: PasskeyStore, rp: RelyingParty, response: AuthenticationResponseJSON, expect: AssertionExpectation, now: Date,
): Promise<AssertionOutcome> {
  const signed = signedChallenge(response);
  if (!signed) return { ok: false, reason: 'challenge' };
  if (expect.challenge) {
    if (signed !== expect.challenge) return { ok: false, reason: 'challenge' };
  } else if (!(await store.takeChallenge(signed, 'signin', null, now))) {
    return { ok: false, reason: 'challenge' };
  }
  const found = typeof response.id === 'string' ? await store.findByCredential(response.id) : undefined;
  if (!found || (expect.ownerId !== null && found.ownerId !== expect.ownerId)) return { ok: false, reason: 'invalid' };
  const check = await verifyAssertion(rp, response, signed, found);
  if (!check.ok) {
    if (check.reason !== 'counter') return { ok: false, reason: 'invalid' };
    expect.onCounterRegressed(found);
    throw PasskeyErrors.passkey_counter_regressed();
  }
  if (!(await store.recordUse(found.id, check.newCounter, check.backedUp, now))) return { ok: false, reason: 'invalid' };
  return { ok: true, passkey: found, userVerified: check.userVerified };
}

/** A passkey name as stored: trimmed, 1 to 100 characters, or 400 `passkey_name_invalid` (spaces alone are no name). */
export function passkeyName(raw: string | undefined, fallback?: string): string {
  const name = (raw ?? '').trim();
  if (!name && fallback !== undefined) return fallback;
  if (!name || [...name].length > 100) throw PasskeyErrors.passkey_name_invalid();
  return name;
}
