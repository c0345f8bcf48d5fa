/**
 * Access tokens for operators and end users: one way to issue and verify them. HS256 only (the
 * verifier never takes the algorithm from the token), issuer `plinth`, an audience per kind
 * of token (the dashboard, or one project: a token of one project is worthless in another),
 * `iat`/`exp` from the caller's clock. Each caller signs with its own secret
 * (DASHBOARD_JWT_SECRET, or the project's secret) and checks its own claims.
 */
import { jwtVerify, SignJWT, type JWTPayload } from 'jose';

const ISSUER = 'plinth';

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
    .sign(spec.secret);
}

/** The payload of a token signed with `secret` for `audience` and not expired at `now`; null otherwise. */
export async function verifyAccessJwt(token: string, secret: Uint8Array, audience: string, now: Date): Promise<JWTPayload | null> {
  try {
    const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], issuer: ISSUER, audience, currentDate: now });
    return typeof payload.sub === 'string' && typeof payload.iat === 'number' ? payload : null;
  } catch {
    return null;
  }
}
