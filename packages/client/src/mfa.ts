/**
 * `@plinth/client/mfa`: second factors and passkeys (docs/auth.md "Second factors and
 * passkeys"). Authenticator apps (enrol, confirm, remove), recovery codes, step-up to aal2, the
 * second step of a sign-in with a passkey, and passkeys through the browser's WebAuthn API:
 * register one, sign in with one (no email typed), list, rename, remove. The WebAuthn options
 * and answers are converted to and from their JSON form here (no dependency).
 */
import type { PlinthClient } from './index.js';
import type { SchemaMap } from './data.js';
import type { Auth, SignInOk, SignInResult } from './auth.js';
import type { Transport } from './core.js';

/** A fresh second factor, as the routes that need one take it. */
export type Proof = { code: string } | { recoveryCode: string } | { passkey: unknown };

export interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt?: string | null;
  backedUp?: boolean;
}

export interface Factors {
  totp: { confirmed: boolean; createdAt: string } | null;
  passkeys: Passkey[];
  recoveryCodesLeft: number;
  /** This session's assurance: `aal1` or `aal2`. */
  aal: string;
}

type Json = Record<string, unknown>;
const A = '/api/userAuth';

const dec = (s: string): ArrayBuffer => {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
  return Uint8Array.from(b, (c) => c.charCodeAt(0)).buffer;
};
const enc = (b: ArrayBuffer | null | undefined): string | undefined =>
  b ? btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') : undefined;
const ids = (list: unknown) => (list as Array<Json> | undefined)?.map((c) => ({ ...c, id: dec(c.id as string) }));

/** navigator.credentials.create() with the server's JSON options; the JSON answer. */
async function create(options: Json): Promise<Json> {
  const user = options.user as Json;
  const publicKey = { ...options, challenge: dec(options.challenge as string), user: { ...user, id: dec(user.id as string) }, excludeCredentials: ids(options.excludeCredentials) };
  const cred = (await navigator.credentials.create({ publicKey } as CredentialCreationOptions)) as PublicKeyCredential;
  const r = cred.response as AuthenticatorAttestationResponse;
  return {
    id: cred.id,
    rawId: enc(cred.rawId),
    type: cred.type,
    authenticatorAttachment: cred.authenticatorAttachment ?? undefined,
    clientExtensionResults: cred.getClientExtensionResults(),
    response: { clientDataJSON: enc(r.clientDataJSON), attestationObject: enc(r.attestationObject), transports: r.getTransports?.() ?? [] },
  };
}

/** navigator.credentials.get() with the server's JSON options; the JSON answer. */
async function get(options: Json): Promise<Json> {
  const publicKey = { ...options, challenge: dec(options.challenge as string), allowCredentials: ids(options.allowCredentials) };
  const cred = (await navigator.credentials.get({ publicKey } as CredentialRequestOptions)) as PublicKeyCredential;
  const r = cred.response as AuthenticatorAssertionResponse;
  return {
    id: cred.id,
    rawId: enc(cred.rawId),
    type: cred.type,
    authenticatorAttachment: cred.authenticatorAttachment ?? undefined,
    clientExtensionResults: cred.getClientExtensionResults(),
    response: { clientDataJSON: enc(r.clientDataJSON), authenticatorData: enc(r.authenticatorData), signature: enc(r.signature), userHandle: enc(r.userHandle) },
  };
}

export class Mfa {
  private readonly t: Transport;
  private readonly auth: Auth;

  constructor(client: PlinthClient<SchemaMap>) {
    this.t = client.transport;
    this.auth = client.auth;
  }

  // ---- Authenticator app --------------------------------------------------------------------

  /** Starts enrolling an authenticator app: show `qrCode` (an SVG data URL) or `otpauthUri`. */
  enrollTotp(): Promise<{ secret: string; otpauthUri: string; qrCode: string }> {
    return this.t.request({ method: 'POST', path: `${A}/mfa/totp/enroll`, body: {} });
  }

  /** Confirms with the app's first code: ten recovery codes (show them once); this session becomes aal2. */
  async confirmTotp(code: string): Promise<{ recoveryCodes: string[] }> {
    const a = await this.t.request<{ recoveryCodes: string[]; accessToken?: string }>({ method: 'POST', path: `${A}/mfa/totp/confirm`, body: { code }, retries: 0 });
    this.auth.updateFrom(a);
    return { recoveryCodes: a.recoveryCodes };
  }

  async removeTotp(proof: Proof): Promise<void> {
    await this.t.request({ method: 'DELETE', path: `${A}/mfa/totp`, body: proof, retries: 0 });
  }

  factors(): Promise<Factors> {
    return this.t.request({ path: `${A}/mfa/factors` });
  }

  async regenerateRecoveryCodes(proof: Proof): Promise<string[]> {
    return (await this.t.request<{ recoveryCodes: string[] }>({ method: 'POST', path: `${A}/mfa/recovery-codes`, body: proof, retries: 0 })).recoveryCodes;
  }

  /** Raises this session to aal2 (needed for account changes once a factor exists). */
  async stepUp(proof: Proof): Promise<void> {
    this.auth.updateFrom(await this.t.request<{ accessToken?: string }>({ method: 'POST', path: `${A}/mfa/step-up`, body: proof, retries: 0 }));
  }

  // ---- Passkeys (browsers) ------------------------------------------------------------------

  /** Creates a passkey for the signed-in user (the browser asks the person); answers recovery codes when it is their first factor. */
  async registerPasskey(name: string): Promise<{ recoveryCodes?: string[] }> {
    const options = await this.t.request<Json>({ method: 'POST', path: `${A}/passkeys/register/options`, body: {} });
    const a = await this.t.request<{ recoveryCodes?: string[]; accessToken?: string }>({
      method: 'POST',
      path: `${A}/passkeys/register`,
      body: { name, response: await create(options) },
      retries: 0,
    });
    this.auth.updateFrom(a);
    return { recoveryCodes: a.recoveryCodes };
  }

  /** Signs in with a passkey, no email typed (a discoverable credential). */
  async signInWithPasskey(): Promise<SignInOk> {
    const options = await this.t.request<Json>({ method: 'POST', path: `${A}/passkeys/signin/options`, body: {}, auth: false });
    return (await this.auth.signInWith('/passkeys/signin', { response: await get(options) })) as SignInOk;
  }

  /** The second step of a sign-in (`mfaRequired`) with one of the user's passkeys. */
  async verifyWithPasskey(challengeId: string): Promise<SignInResult> {
    const options = await this.t.request<Json>({ method: 'POST', path: `${A}/mfa/passkey/options`, body: { challengeId }, auth: false });
    return this.auth.signInWith('/mfa/verify', { challengeId, passkey: await get(options) });
  }

  /** A passkey assertion to use as a `Proof` (removing a factor, stepping up). */
  async passkeyProof(): Promise<Proof> {
    const options = await this.t.request<Json>({ method: 'POST', path: `${A}/passkeys/signin/options`, body: {}, auth: false });
    return { passkey: await get(options) };
  }

  async passkeys(): Promise<Passkey[]> {
    const d = await this.t.request<Passkey[] | { passkeys: Passkey[] }>({ path: `${A}/passkeys` });
    return Array.isArray(d) ? d : d.passkeys;
  }

  async renamePasskey(id: string, name: string): Promise<void> {
    await this.t.request({ method: 'PATCH', path: `${A}/passkeys/${encodeURIComponent(id)}`, body: { name } });
  }

  async removePasskey(id: string, proof: Proof): Promise<void> {
    await this.t.request({ method: 'DELETE', path: `${A}/passkeys/${encodeURIComponent(id)}`, body: proof, retries: 0 });
  }
}

export function mfa<S extends SchemaMap>(client: PlinthClient<S>): Mfa {
  return new Mfa(client as unknown as PlinthClient<SchemaMap>);
}
