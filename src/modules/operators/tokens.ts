/**
 * Dashboard (operator) access tokens (src/lib/identity/jwt.ts): signed with
 * DASHBOARD_JWT_SECRET, audience `plinth-dashboard`, 15 minutes. Sent as the `accessToken`
 * cookie or as `Authorization: Bearer`.
 */
import { signAccessJwt, verifyAccessJwt } from '../../lib/identity/jwt.js';
import { assuranceOf, type Aal, type AmrEntry, type Assurance } from '../../lib/identity/assurance.js';

export const OPERATOR_ACCESS_TTL_SECONDS = 15 * 60;
const AUDIENCE = 'plinth-dashboard';

/**
 * Claims `typ`, the session's `aal`/`amr` (src/lib/identity/assurance.ts) and `sid`, the
 * session (refresh family) it belongs to: revoking that session ends the token at once (auth.ts).
 */
export function signOperatorToken(secret: Buffer, operatorId: string, now: Date, assurance?: Assurance, sid?: string): Promise<string> {
  const claims = { typ: 'operator', aal: assurance?.aal ?? 'aal1', amr: assurance?.amr ?? [], ...(sid ? { sid } : {}) };
  return signAccessJwt({ secret, audience: AUDIENCE, subject: operatorId, ttlSeconds: OPERATOR_ACCESS_TTL_SECONDS, now, claims });
}

/**
 * The operator id, the issue time (seconds), the assurance and the session id (null for a token
 * issued before tokens carried one), or null when the token is malformed, forged or expired.
 */
export async function verifyOperatorToken(
  secret: Buffer, token: string, now: Date,
): Promise<{ id: string; issuedAt: number; expiresAt: number; aal: Aal; amr: AmrEntry[]; sid: string | null } | null> {
  const payload = await verifyAccessJwt(token, secret, AUDIENCE, now);
  if (!payload || payload.typ !== 'operator') return null;
  const { aal, amr } = assuranceOf(payload);
  const sid = typeof payload.sid === 'string' ? payload.sid : null;
  return { id: payload.sub!, issuedAt: payload.iat!, expiresAt: payload.exp!, aal, amr, sid };
}
