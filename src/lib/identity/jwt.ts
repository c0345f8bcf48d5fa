/**
 * Access tokens for operators and end users: one way to issue and verify them. HS256 only (the
 * verifier never takes the algorithm from the token), issuer `plinth`, an audience per kind
 * of token (the dashboard, or one project: a token of one project is worthless in another),
 * `iat`/`exp` from the caller's clock. Each caller signs with its own secret
 * (DASHBOARD_JWT_SECRET, or the project's secret) and checks its own claims.
 */
import { webcrypto } from 'node:crypto';
import { jwtVerify, SignJWT, type JWTPayload } from 'jose';

const ISSUER = 'plinth';

/**
 * Each secret's HMAC key, imported once. Given raw bytes, jose imports a key on every sign and
 * verify, which costs about as much as the HMAC itself (≈ 35 µs of ≈ 90 µs per token). Keyed by
 * the secret's identity: callers hold theirs for the process (config) or while the project is
 * cached, so a rotated secret is a new array and a new key; dropped arrays drop their keys.
 */
const keys = new WeakMap<Uint8Array, Promise<webcrypto.CryptoKey>>();

function hmacKey(secret: Uint8Array): Promise<webcrypto.CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = webcrypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    keys.set(secret, key);
  }
  return key;
}

export interface AccessTokenSpec {
  secret: Uint8Array;
  audience: string;
  subject: string;
  ttlSeconds: number;
  now: Date;
  /** Extra claims the caller's verifier checks (e.g. `typ`, `projectId`). */
  claims?: Record<string, unknown>;
}

export async function signAccessJwt(spec: AccessTokenSpec): Promise<string> {
  const iat = Math.floor(spec.now.getTime() / 1000);
  return new SignJWT(spec.claims ?? {})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(spec.subject)
    .setIssuer(ISSUER)
    .setAudience(spec.audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + spec.ttlSeconds)
    .sign(await hmacKey(spec.secret));
}

/** The payload of a token signed with `secret` for `audience` and not expired at `now`; null otherwise. */
export async function verifyAccessJwt(token: string, secret: Uint8Array, audience: string, now: Date): Promise<JWTPayload | null> {
  try {
    const { payload } = await jwtVerify(token, await hmacKey(secret), { algorithms: ['HS256'], issuer: ISSUER, audience, currentDate: now });
    return typeof payload.sub === 'string' && typeof payload.iat === 'number' ? payload : null;
  } catch {
    return null;
  }
}
