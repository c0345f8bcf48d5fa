/**
 * Dashboard (operator) access tokens (src/lib/identity/jwt.ts): signed with
 * DASHBOARD_JWT_SECRET, audience `plinth-dashboard`, 15 minutes. Sent as the `accessToken`
 * cookie or as `Authorization: Bearer`.
 */
import { signAccessJwt, verifyAccessJwt } from '../../lib/identity/jwt.js';
import { assuranceOf, type Aal, type AmrEntry, type Assurance } from '../../lib/identity/assurance.js';

export const OPERATOR_ACCESS_TTL_SECONDS = 15 * 60;
const AUDIENCE = 'plinth-dashboard';

/** Claims `typ`, and the session's `aal`/`amr` (src/lib/identity/assurance.ts). */
export function signOperatorToken(secret: Buffer, operatorId: string, now: Date, assurance?: Assurance): Promise<string> {
  const claims = { typ: 'operator', aal: assurance?.aal ?? 'aal1', amr: assurance?.amr ?? [] };
  return signAccessJwt({ secret, audience: AUDIENCE, subject: operatorId, ttlSeconds: OPERATOR_ACCESS_TTL_SECONDS, now, claims });
}

/** The operator id, the issue time (seconds) and the assurance, or null when the token is malformed, forged or expired. */
export async function verifyOperatorToken(secret: Buffer, token: string, now: Date): Promise<{ id: string; issuedAt: number; aal: Aal; amr: AmrEntry[] } | null> {
  const payload = await verifyAccessJwt(token, secret, AUDIENCE, now);
  if (!payload || payload.typ !== 'operator') return null;
  const { aal, amr } = assuranceOf(payload);
  return { id: payload.sub!, issuedAt: payload.iat!, aal, amr };
}
