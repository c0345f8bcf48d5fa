/**
 * Operator sessions: a short-lived access JWT plus an opaque refresh token, made and judged by
 * src/lib/identity/refresh-token.ts (shared with end users), rotated on every use. A refresh
 * token presented a second time means it leaked, so its whole family (every token descended
 * from the same login) is revoked.
 */
import type { AppContext } from '../../context.js';
import { randomId } from '../../lib/ids.js';
import { newRefreshSecret, refreshTokenHash, rejectionOf } from '../../lib/identity/refresh-token.js';
import { OperatorErrors } from './errors.js';
import { consumeSession, findSession, insertSession, revokeFamily, setSessionClient } from './queries.js';
import { OPERATOR_ACCESS_TTL_SECONDS, signOperatorToken } from './tokens.js';
import { IdentityErrors } from '../../lib/identity/errors.js';
import { firstFactor, type Assurance } from '../../lib/identity/assurance.js';

export const OPERATOR_REFRESH_TTL_SECONDS = 7 * 24 * 3600;
/** Reported to clients the way end-user logins report it (docs/wire-compatibility.md §2.2). */
export const ACCESS_EXPIRES_IN = `${OPERATOR_ACCESS_TTL_SECONDS / 60}m`;

export interface IssuedSession {
  accessToken: string;
  refreshToken: string;
  expiresIn: string;
  /** The session's id (its refresh family, the tokens' `sid`): never sent to the client with the tokens. */
  familyId: string;
}

/** A session (a new family by default) at the given assurance (a password alone by default). */
export async function issueSession(ctx: AppContext, operatorId: string, familyId = randomId(), assurance?: Assurance): Promise<IssuedSession> {
  const now = ctx.clock.now();
  const { aal, amr } = assurance ?? firstFactor('pwd', now);
  const { secret: refreshToken, tokenHash } = newRefreshSecret();
  await insertSession(ctx.db.admin, {
    operatorId,
    familyId,
    tokenHash,
    expiresAt: new Date(now.getTime() + OPERATOR_REFRESH_TTL_SECONDS * 1000),
    now,
    aal,
    amr,
  });
  const accessToken = await signOperatorToken(ctx.config.dashboardJwtSecret, operatorId, now, { aal, amr }, familyId);
  return { accessToken, refreshToken, expiresIn: ACCESS_EXPIRES_IN, familyId };
}

/**
 * Tells every node that sessions of the operator ended (`sessions`, or all but `except` when
 * null), so their console streams close now rather than when their access token expires.
 */
export async function announceSessionsEnded(ctx: AppContext, operatorId: string, sessions: string[] | null, except: string | null = null): Promise<void> {
  try {
    await ctx.bus.publish({ type: 'operator_sessions_ended', id: operatorId, sessions, except });
  } catch (err) {
    // The sessions are revoked in the database: no new ticket or stream opens; open ones end at their token's expiry.
    ctx.log.warn({ err, operatorId }, 'operators: could not announce ended sessions');
  }
}

/** Trades a live refresh token for a new session in the same family. */
export async function rotateSession(ctx: AppContext, rawToken: string): Promise<{ operatorId: string; session: IssuedSession }> {
  const now = ctx.clock.now();
  const hash = refreshTokenHash(rawToken);
  const live = await consumeSession(ctx.db.admin, hash, now);
  if (!live) {
    const known = await findSession(ctx.db.admin, hash);
    if (known && rejectionOf(known, hash) === 'replayed') {
      await revokeFamily(ctx.db.admin, known.family_id, now);
      await announceSessionsEnded(ctx, known.operator_id, [known.family_id]);
      // An expired token that was never used is the tip of its family: nothing leaked, and the
      // SDK's text for it is "Invalid or expired refresh token".
      if (known.used_at || known.revoked_at) {
        ctx.log.warn({ operatorId: known.operator_id }, 'operator refresh token reused: session family revoked');
        throw IdentityErrors.refresh_reused('Invalid refresh token');
      }
    }
    throw OperatorErrors.refresh_invalid();
  }
  const session = await issueSession(ctx, live.operator_id, live.family_id, { aal: live.aal, amr: live.amr });
  return { operatorId: live.operator_id, session };
}

/** Notes the client (address, User-Agent) of the request a session was issued to, for the sessions list. */
export async function noteSessionClient(ctx: AppContext, session: IssuedSession, client: { ip: string | null; userAgent: string | null }): Promise<void> {
  await setSessionClient(ctx.db.admin, refreshTokenHash(session.refreshToken), client.ip, client.userAgent);
}

/** Logout: ends the presented session's family. Unknown tokens are ignored (logout always succeeds). */
export async function endSession(ctx: AppContext, rawToken: string): Promise<void> {
  const known = await findSession(ctx.db.admin, refreshTokenHash(rawToken));
  if (!known) return;
  await revokeFamily(ctx.db.admin, known.family_id, ctx.clock.now());
  await announceSessionsEnded(ctx, known.operator_id, [known.family_id]);
}
