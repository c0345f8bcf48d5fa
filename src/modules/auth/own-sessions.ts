/**
 * A signed-in user's own sessions (docs/auth.md "Your own sessions"): the live session families
 * (one per sign-in, kept across refreshes) with their device, address and last use, and
 * revoking one or every other. A session is named by its family id, the `sid` claim of its
 * access tokens, so the caller's own session is marked `current`. Revoking ends the family's
 * refresh token at once; access tokens already issued stay valid until they expire
 * (USER_ACCESS_TOKEN_TTL), as for every revocation.
 */
import Bowser from 'bowser';
import type { AppContext } from '../../context.js';
import type { ProjectRecord } from '../projects/cache.js';
import { AuthErrors } from './errors.js';
import { listOwnSessions, revokeOtherFamilies, revokeOwnFamily, revokeUserSessions } from './session-queries.js';
import type { UserTokenClaims } from './tokens.js';

const scope = (project: ProjectRecord, userId: string) => ({ projectId: project.id, userId, keyKind: 'publishable' as const, account: true });

/** A short device name from a User-Agent: "Chrome 131 on macOS", or its first product token (an SDK), or null. */
export function deviceName(userAgent: string | null): string | null {
  if (!userAgent) return null;
  const parsed = Bowser.parse(userAgent);
  const browser = parsed.browser.name ? `${parsed.browser.name}${parsed.browser.version ? ` ${parsed.browser.version.split('.')[0]}` : ''}` : null;
  const os = parsed.os.name ?? null;
  if (browser && os) return `${browser} on ${os}`;
  if (browser || os) return (browser ?? os)!;
  return userAgent.split(/\s/)[0]!.slice(0, 100) || null;
}

export async function ownSessions(ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims) {
  const rows = await ctx.db.read(scope(project, caller.userId), (db) => listOwnSessions(db, caller.userId, ctx.clock.now()));
  return rows.map((r) => ({
    id: r.family_id,
    current: r.family_id === caller.sid,
    device: deviceName(r.user_agent),
    userAgent: r.user_agent,
    ip: r.ip,
    aal: r.aal,
    signedInAt: new Date(r.signed_in_at).toISOString(),
    lastUsedAt: r.last_used_at.toISOString(),
    expiresAt: r.expires_at.toISOString(),
  }));
}

/** Revokes one of the caller's sessions (possibly the current one); 404 when it is not theirs. */
export async function revokeOwnSession(ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims, sessionId: string): Promise<void> {
  const n = await ctx.db.read(scope(project, caller.userId), (db) => revokeOwnFamily(db, caller.userId, sessionId, ctx.clock.now()));
  if (n === 0) throw AuthErrors.session_not_found();
}

/**
 * Revokes every session of the caller but the current one. A token issued before sessions had
 * ids (no `sid`) cannot name its session: then every session is revoked, the current included.
 */
export async function revokeOtherSessions(ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims): Promise<number> {
  const now = ctx.clock.now();
  return ctx.db.read(scope(project, caller.userId), (db) =>
    caller.sid ? revokeOtherFamilies(db, caller.userId, caller.sid, now) : revokeUserSessions(db, caller.userId, now),
  );
}
