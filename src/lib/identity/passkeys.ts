/**
 * Passkeys (WebAuthn) for operators and end users: one implementation for both, on
 * @simplewebauthn/server. Registration requires user verification and a discoverable
 * credential, attestation `none`. An assertion is verified against one relying party id and
 * its allowed origins; the caller finds the credential in its own table (so a credential of
 * another project's relying party is unknown there) and takes the challenge out of its own
 * table first (single use). Counters: the signature is verified first, then a counter that did
 * not grow (while either side is non-zero) is refused, as is a change of backup eligibility.
 */
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';

export type { AuthenticationResponseJSON, RegistrationResponseJSON };

export const PASSKEY_CHALLENGE_TTL_SECONDS = 300;

export interface RelyingParty {
  rpId: string;
  origins: string[];
  name: string;
}

export interface StoredPasskey {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  backupEligible: boolean;
}

export function registrationOptions(rp: RelyingParty, user: { id: string; name: string }, exclude: StoredPasskey[]) {
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.rpId,
    userName: user.name,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    timeout: PASSKEY_CHALLENGE_TTL_SECONDS * 1000,
    excludeCredentials: exclude.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
}

export function authenticationOptions(rp: RelyingParty, allow: StoredPasskey[]) {
  return generateAuthenticationOptions({
    rpID: rp.rpId,
    timeout: PASSKEY_CHALLENGE_TTL_SECONDS * 1000,
    userVerification: 'preferred',
    allowCredentials: allow.length ? allow.map((p) => ({ id: p.credentialId, transports: p.transports })) : undefined,
  });
}

/** The challenge a response signed (base64url, as the options carried it); null when unreadable. */
export function signedChallenge(response: { response?: { clientDataJSON?: unknown } }): string | null {
  try {
    const raw = response.response?.clientDataJSON;
    if (typeof raw !== 'string') return null;
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof parsed.challenge === 'string' ? parsed.challenge : null;
  } catch {
    return null;
  }
}

/** A verified new credential, or null (any verification failure). */
export async function verifyRegistration(rp: RelyingParty, response: RegistrationResponseJSON, expectedChallenge: string) {
  try {
    const r = await verifyRegistrationResponse({ response, expectedChallenge, expectedOrigin: rp.origins, expectedRPID: rp.rpId, requireUserVerification: true });
    if (!r.verified) return null;
    const { credential, credentialDeviceType, credentialBackedUp } = r.registrationInfo;
    return {
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: (credential.transports ?? []).filter((t) => typeof t === 'string').slice(0, 8),
      backupEligible: credentialDeviceType === 'multiDevice',
      backedUp: credentialBackedUp,
    };
  } catch {
    return null;
  }
}

export type AssertionCheck =
  | { ok: true; newCounter: number; userVerified: boolean; backedUp: boolean }
  | { ok: false; reason: 'invalid' | 'counter' | 'backup_flags' };

/** Verifies an assertion by a stored credential (the caller found it by id and checked its owner). */
export async function verifyAssertion(
  rp: RelyingParty, response: AuthenticationResponseJSON, expectedChallenge: string, stored: StoredPasskey,
): Promise<AssertionCheck> {
  let info;
  try {
    // Counter 0 here: the library would refuse a counter before checking the signature; it is judged below, after.
    const r = await verifyAuthenticationResponse({
      response, expectedChallenge, expectedOrigin: rp.origins, expectedRPID: rp.rpId,
      credential: { id: stored.credentialId, publicKey: Buffer.from(stored.publicKey, 'base64url'), counter: 0, transports: stored.transports },
      requireUserVerification: false,
    });
    if (!r.verified) return { ok: false, reason: 'invalid' };
    info = r.authenticationInfo;
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  if ((info.newCounter > 0 || stored.counter > 0) && info.newCounter <= stored.counter) return { ok: false, reason: 'counter' };
  if ((info.credentialDeviceType === 'multiDevice') !== stored.backupEligible) return { ok: false, reason: 'backup_flags' };
  return { ok: true, newCounter: info.newCounter, userVerified: info.userVerified, backedUp: info.credentialBackedUp };
}
