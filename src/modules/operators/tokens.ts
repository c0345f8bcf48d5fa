/**
 * Dashboard (operator) access tokens: HS256 JWTs signed with DASHBOARD_JWT_SECRET, 15 minutes.
 * Sent as the `accessToken` cookie or as `Authorization: Bearer`.
 */
import { SignJWT, jwtVerify } from 'jose';

export const OPERATOR_ACCESS_TTL_SECONDS = 15 * 60;
const ISSUER = 'plinth';
const AUDIENCE = 'plinth-dashboard';

export async function signOperatorToken(secret: Buffer, operatorId: string, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ typ: 'operator' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(operatorId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + OPERATOR_ACCESS_TTL_SECONDS)
    .sign(secret);
}

/** The operator id and the issue time (seconds), or null when the token is malformed, forged or expired. */
export async function verifyOperatorToken(secret: Buffer, token: string, now: Date): Promise<{ id: string; issuedAt: number } | null> {
  try {
    const { payload } = await jwtVerify(token, secret, {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: now,
    });
    if (payload.typ !== 'operator' || typeof payload.sub !== 'string' || typeof payload.iat !== 'number') return null;
    return { id: payload.sub, issuedAt: payload.iat };
  } catch {
    return null;
  }
}
