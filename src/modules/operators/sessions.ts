/**
 * Operator sessions: a short-lived access JWT plus an opaque refresh token (stored as its
 * SHA-256), rotated on every use. A refresh token presented a second time means it leaked,
 * so its whole family (every token descended from the same login) is revoked.
 */
import type { AppContext } from '../../context.js';
import { randomToken, sha256Hex } from '../../lib/crypto.js';
import { randomId } from '../../lib/ids.js';
import { OperatorErrors } from './errors.js';
import { consumeSession, findSession, insertSession, revokeFamily } from './queries.js';
import { OPERATOR_ACCESS_TTL_SECONDS, signOperatorToken } from './tokens.js';
import { IdentityErrors } from '../../lib/identity/errors.js';

export const OPERATOR_REFRESH_TTL_SECONDS = 7 * 24 * 3600;
/** Reported to clients the way end-user logins report it (contract §2.2). */
export const ACCESS_EXPIRES_IN = `${OPERATOR_ACCESS_TTL_SECONDS / 60}m`;

export interface IssuedSession {
  accessToken: string;
  refreshToken: string;
  expiresIn: string;
}

export async function issueSession(ctx: AppContext, operatorId: string, familyId = randomId()): Promise<IssuedSession> {
  const now = ctx.clock.now();
  const refreshToken = randomToken(32);
  await insertSession(ctx.db.admin, {
    operatorId,
    familyId,
    tokenHash: sha256Hex(refreshToken),
    expiresAt: new Date(now.getTime() + OPERATOR_REFRESH_TTL_SECONDS * 1000),
    now,
  });
  const accessToken = await signOperatorToken(ctx.config.dashboardJwtSecret, operatorId, now);
  return { accessToken, refreshToken, expiresIn: ACCESS_EXPIRES_IN };
}

/** Trades a live refresh token for a new session in the same family. */
export async function rotateSession(ctx: AppContext, rawToken: string): Promise<{ operatorId: string; session: IssuedSession }> {
  const now = ctx.clock.now();
  const hash = sha256Hex(rawToken);
  const live = await consumeSession(ctx.db.admin, hash, now);
  if (!live) {
    const known = await findSession(ctx.db.admin, hash);
    if (known && (known.used_at || known.revoked_at)) {
      await revokeFamily(ctx.db.admin, known.family_id, now);
      ctx.log.warn({ operatorId: known.operator_id }, 'operator refresh token reused: session family revoked');
      throw IdentityErrors.refresh_reused('Invalid refresh token');
    }
    throw OperatorErrors.refresh_invalid();
  }
  const session = await issueSession(ctx, live.operator_id, live.family_id);
  return { operatorId: live.operator_id, session };
}

/** Logout: ends the presented session's family. Unknown tokens are ignored (logout always succeeds). */
export async function endSession(ctx: AppContext, rawToken: string): Promise<void> {
  const known = await findSession(ctx.db.admin, sha256Hex(rawToken));
  if (known) await revokeFamily(ctx.db.admin, known.family_id, ctx.clock.now());
}
