/**
 * Dashboard (operator) access tokens (src/lib/identity/jwt.ts): signed with
 * DASHBOARD_JWT_SECRET, audience `plinth-dashboard`, 15 minutes. Sent as the `accessToken`
 * cookie or as `Authorization: Bearer`.
 */
import { signAccessJwt, verifyAccessJwt } from '../../lib/identity/jwt.js';

export const OPERATOR_ACCESS_TTL_SECONDS = 15 * 60;
const AUDIENCE = 'plinth-dashboard';

export function signOperatorToken(secret: Buffer, operatorId: string, now: Date): Promise<string> {
  return signAccessJwt({ secret, audience: AUDIENCE, subject: operatorId, ttlSeconds: OPERATOR_ACCESS_TTL_SECONDS, now, claims: { typ: 'operator' } });
}

/** The operator id and the issue time (seconds), or null when the token is malformed, forged or expired. */
export async function verifyOperatorToken(secret: Buffer, token: string, now: Date): Promise<{ id: string; issuedAt: number } | null> {
  const payload = await verifyAccessJwt(token, secret, AUDIENCE, now);
  if (!payload || payload.typ !== 'operator') return null;
  return { id: payload.sub!, issuedAt: payload.iat! };
}
