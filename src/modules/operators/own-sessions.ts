/**
 * An operator's own sessions (docs/operators-and-projects.md "Your sessions"), as end users have
 * theirs (src/modules/auth/own-sessions.ts): the live session families (one per sign-in, kept
 * across refreshes) with their device, address and last use; revoking one or every other. A
 * session is named by its family id, the `sid` claim of its access tokens, so the caller's own
 * is marked `current`. Revoking ends the refresh token and, since the operator's authentication
 * checks the token's session on every request (auth.ts), its access tokens too, at once.
 */
import type { AppContext } from '../../context.js';
import { deviceName } from '../auth/own-sessions.js';
import { AuthErrors } from '../auth/errors.js';
import type { OperatorIdentity } from './identity.js';
import { listOperatorSessions, revokeOperatorFamily, revokeOtherOperatorFamilies } from './queries.js';
import { announceSessionsEnded } from './sessions.js';

/** Session ids are 24 or 32 hex characters (migrations/014_random_session_ids.sql); anything else names none. */
const SESSION_ID = /^[0-9a-f]{24}([0-9a-f]{8})?$/;

export async function operatorSessions(ctx: AppContext, operator: OperatorIdentity) {
  const rows = await listOperatorSessions(ctx.db.admin, operator.id, ctx.clock.now());
  return rows.map((r) => ({
    id: r.family_id,
    current: r.family_id === operator.sessionId,
    device: deviceName(r.user_agent),
    userAgent: r.user_agent,
    ip: r.ip,
    aal: r.aal,
    methods: [...new Set((r.amr ?? []).map((e) => e.method))],
    signedInAt: new Date(r.signed_in_at).toISOString(),
    lastUsedAt: new Date(r.last_used_at).toISOString(),
    expiresAt: new Date(r.expires_at).toISOString(),
  }));
}

/** Revokes one of the operator's sessions (possibly the current one); 404 `session_not_found` when it is not theirs. */
export async function revokeOperatorSession(ctx: AppContext, operator: OperatorIdentity, sessionId: string): Promise<void> {
  const n = SESSION_ID.test(sessionId) ? await revokeOperatorFamily(ctx.db.admin, operator.id, sessionId, ctx.clock.now()) : 0;
  if (n === 0) throw AuthErrors.session_not_found('Session not found or not one of yours');
  await announceSessionsEnded(ctx, operator.id, [sessionId]);
  ctx.log.info({ audit: 'operator.session.revoked', operatorId: operator.id, current: sessionId === operator.sessionId }, 'audit: an operator revoked one of their sessions');
}

/**
 * Revokes every session of the operator but the current one; how many ended. A token issued
 * before tokens named their session cannot tell which is its own: then every session ends.
 */
export async function revokeOtherOperatorSessions(ctx: AppContext, operator: OperatorIdentity): Promise<number> {
  const revoked = await revokeOtherOperatorFamilies(ctx.db.admin, operator.id, operator.sessionId ?? null, ctx.clock.now());
  await announceSessionsEnded(ctx, operator.id, null, operator.sessionId ?? null);
  ctx.log.info({ audit: 'operator.session.revoked_others', operatorId: operator.id, revoked }, "audit: an operator revoked their other sessions");
  return revoked;
}
