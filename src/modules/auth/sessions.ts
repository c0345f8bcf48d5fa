/**
 * Refresh sessions. A refresh token is `<sessionId>.<secret>`: opaque to clients, stored only
 * as SHA-256(secret), rotated on every use. The id is random (128 bits) and proves nothing;
 * the secret (256 bits) proves possession. Presenting a token that was valid and is now used,
 * revoked or expired revokes the whole family: the token leaked or was replayed. A wrong
 * secret is treated exactly like an unknown id (same 401, nothing revoked), so neither a
 * guessed id nor a junk secret can log anyone out or tell which ids exist.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { randomId } from '../../lib/ids.js';
import { newRefreshSecret, parseIdSecretToken, refreshTokenHash, rejectionOf } from '../../lib/identity/refresh-token.js';
import type { ProjectRecord } from '../projects/cache.js';
import { AuthErrors } from './errors.js';
import { deleteSession, findSession, insertSession, type NewSession, type RotatedSession, isUserDisabled, revokeFamily, revokeSession, rotateSession, sessionExistsAnywhere } from './session-queries.js';
import { signAccessToken, type TokenSession } from './tokens.js';
import { findUserById, type UserRow } from './queries.js';
import { authHook, tokenClaims } from '../functions/auth-hooks.js';
import { withoutHidden } from '../collections/protection.js';
import { IdentityErrors } from '../../lib/identity/errors.js';
import { firstFactor, type Assurance } from '../../lib/identity/assurance.js';

export interface ClientMeta {
  ip: string | null;
  userAgent: string | null;
  /** The request's Accept-Language: the language of mails it causes (src/modules/mail/auth-mails.ts). */
  acceptLanguage?: string | null;
}

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: string;
}

const parseRefreshToken = parseIdSecretToken;

function newSecret(ctx: AppContext) {
  const now = ctx.clock.now();
  const id = randomId();
  const { secret, tokenHash } = newRefreshSecret();
  const expiresAt = new Date(now.getTime() + ctx.config.userRefreshTokenTtlSeconds * 1000);
  return { id, secret, tokenHash, now, expiresAt, raw: `${id}.${secret}` };
}

/**
 * Where the token-claims hook reads the user from when the project has one: a row at hand, or a
 * read of its own. Never an open transaction: the hook runs outside any (issueSession).
 */
export interface TokenContext {
  user?: UserRow;
  /** What issues the token, for the hook: the first factor's method by default, 'refresh' on a refresh. */
  method?: string;
  /** The hook's claims, already asked for (a refresh asks before it rotates). */
  custom?: Record<string, unknown> | null;
}

/**
 * An access token for a session family at its assurance, with the claims of the project's
 * token-claims function when it has one (src/modules/functions/auth-hooks.ts). Without one, a
 * registry look-up and no query.
 */
export async function accessTokenFor(ctx: AppContext, project: ProjectRecord, userId: string, session: TokenSession, from?: TokenContext): Promise<string> {
  let custom = from?.custom;
  if (custom === undefined) {
    const hook = await authHook(ctx, project.id, 'token-claims');
    custom = hook ? await claimsFor(ctx, project, hook, userId, session, from) : null;
  }
  return signAccessToken(project, userId, ctx.config.userAccessTokenTtl.seconds, ctx.clock.now(), session, custom);
}

async function claimsFor(
  ctx: AppContext, project: ProjectRecord, hook: NonNullable<Awaited<ReturnType<typeof authHook>>>, userId: string, session: TokenSession, from?: TokenContext,
): Promise<Record<string, unknown> | null> {
  const scope = { projectId: project.id, userId, keyKind: 'publishable' as const, account: true };
  const row = from?.user ?? (await ctx.db.read(scope, (db) => findUserById(db, userId)));
  if (!row) throw AuthErrors.user_not_found();
  const fields = (await ctx.collections.get(project.id, 'users'))?.fields ?? [];
  const user = {
    ...withoutHidden(fields, row.data, false),
    id: row.id, email: row.email, emailVerified: row.email_verified, isAnonymous: row.is_anonymous, authProviders: row.auth_providers,
  };
  return tokenClaims(ctx, project.id, hook, user, from?.method ?? session.amr[0]?.method);
}

export interface PendingSession {
  row: NewSession;
  refreshToken: string;
}

/** A new session family's first row and its refresh token, before anything is stored (a password by default). */
export function newSession(ctx: AppContext, projectId: string, userId: string, meta: ClientMeta, assurance?: Assurance): PendingSession {
  const s = newSecret(ctx);
  const { aal, amr } = assurance ?? firstFactor('pwd', s.now);
  return { row: { ...s, projectId, userId, familyId: s.id, ip: meta.ip, userAgent: meta.userAgent, aal, amr }, refreshToken: s.raw };
}

/** The tokens a client gets for a stored session: a fresh access token and the refresh token. */
export async function sessionTokens(ctx: AppContext, project: ProjectRecord, s: PendingSession, anonymous = false, from?: TokenContext): Promise<Tokens> {
  const { userId, familyId, aal, amr } = s.row;
  const accessToken = await accessTokenFor(ctx, project, userId, { sid: familyId, aal, amr, anonymous }, from);
  return { accessToken, refreshToken: s.refreshToken, expiresIn: ctx.config.userAccessTokenTtl.text };
}

/** A session family stored by startSession, whose tokens issueSession gives once its transaction has committed. */
export interface StartedSession {
  session: PendingSession;
  anonymous: boolean;
}

/**
 * Starts a new session family for a user (login, passwordless, social sign-in, a guest, a
 * completed second factor) inside `tx`: stores its first row. No token yet: the caller issues
 * them with issueSession after `tx` has committed, so that the project's token-claims function
 * never runs inside the sign-in's transaction (holding its connection and locks for up to the
 * function's time limit, and unable to see the user it may have just created).
 */
export async function startSession(ctx: AppContext, tx: Tx, project: ProjectRecord, userId: string, meta: ClientMeta, assurance?: Assurance): Promise<StartedSession> {
  const s = newSession(ctx, project.id, userId, meta, assurance);
  const stored = await insertSession(tx, s.row);
  if (!stored) throw AuthErrors.user_disabled();
  return { session: s, anonymous: stored.isAnonymous };
}

/**
 * The tokens of a session startSession stored, after its transaction committed: the project's
 * token-claims function (if any) runs here, outside any transaction, reading the committed user.
 * When it refuses (its 4xx) or fails, the session row is deleted, so nothing is left that the
 * user cannot use (no refresh token ever left the server), and its error is thrown. What the
 * transaction committed besides stays (a user it created, a link or code it spent).
 */
export async function issueSession(ctx: AppContext, project: ProjectRecord, started: StartedSession, from?: TokenContext): Promise<Tokens> {
  try {
    return await sessionTokens(ctx, project, started.session, started.anonymous, from);
  } catch (err) {
    await discardSession(ctx, project, started);
    throw err;
  }
}

/** Deletes a started session whose tokens never reached the client (a refused token, a failed step after). */
export async function discardSession(ctx: AppContext, project: ProjectRecord, started: StartedSession): Promise<void> {
  const { id, userId } = started.session.row;
  await ctx.db
    .read({ projectId: project.id, userId, keyKind: 'publishable', account: true }, (db) => deleteSession(db, id))
    .catch((cleanup: unknown) => ctx.log.error({ err: cleanup, projectId: project.id }, 'a session whose tokens were not given could not be removed'));
}

type Outcome = { ok: true; session: RotatedSession } | { ok: false; error: 'not_found' | 'reused' | 'disabled' };

/**
 * Why a token was not accepted. Only the real token of a session that is no longer live (a
 * replay of a rotated token, or a stolen one) revokes its family; a wrong secret is "not found".
 */
async function classifyRejection(ctx: AppContext, tx: Tx, id: string, tokenHash: string): Promise<Outcome> {
  const row = await findSession(tx, id);
  if (!row || rejectionOf(row, tokenHash) === 'unknown') return { ok: false, error: 'not_found' };
  await revokeFamily(tx, row.family_id, ctx.clock.now());
  if (await isUserDisabled(tx, row.user_id)) return { ok: false, error: 'disabled' };
  return { ok: false, error: 'reused' };
}

/**
 * Sessions of other projects are invisible to the tenant transaction; a real token of another
 * project gets its own 403 (and keeps its cookie). Id and secret must both match, so this
 * tells nothing to someone who only has an id.
 */
const belongsElsewhere = (ctx: AppContext, id: string, tokenHash: string) => sessionExistsAnywhere(ctx.db.admin, id, tokenHash);

/**
 * A refresh with a token-claims hook asks it before the rotation: a hook that fails must leave
 * the presented token usable (after a rotation the client would hold a used token, and its next
 * try would revoke the family). Only for the live session the token proves; otherwise undefined
 * and the rotation answers as usual. One read more, with a hook only.
 */
async function claimsBeforeRotation(ctx: AppContext, project: ProjectRecord, id: string, tokenHash: string): Promise<Record<string, unknown> | null | undefined> {
  const hook = await authHook(ctx, project.id, 'token-claims');
  if (!hook) return null;
  const row = await ctx.db.read({ projectId: project.id, keyKind: 'publishable', account: true }, (db) => findSession(db, id));
  if (!row || row.used_at || row.revoked_at || row.expires_at <= ctx.clock.now() || rejectionOf(row, tokenHash) !== 'replayed') return undefined;
  return claimsFor(ctx, project, hook, row.user_id, { sid: row.family_id, aal: 'aal1', amr: [] }, { method: 'refresh' });
}

/** Rotates a refresh token: returns fresh tokens, or throws the §2.15 error for the case. */
export async function rotate(ctx: AppContext, project: ProjectRecord, raw: string, meta: ClientMeta): Promise<Tokens> {
  const parsed = parseRefreshToken(raw);
  if (!parsed) throw AuthErrors.refresh_format();
  const next = newSecret(ctx);
  const tokenHash = refreshTokenHash(parsed.secret);
  const custom = await claimsBeforeRotation(ctx, project, parsed.id, tokenHash);
  // The rotation is one atomic statement: autocommit, no transaction round trips (hot path).
  const outcome = await ctx.db.read({ projectId: project.id, keyKind: 'publishable', account: true }, async (tx): Promise<Outcome> => {
    const rotated = await rotateSession(tx, {
      id: parsed.id,
      tokenHash,
      next: { id: next.id, tokenHash: next.tokenHash, ip: meta.ip, userAgent: meta.userAgent, now: next.now, expiresAt: next.expiresAt },
    });
    if (rotated) return { ok: true, session: rotated };
    return classifyRejection(ctx, tx, parsed.id, tokenHash);
  });
  if (!outcome.ok) {
    if (outcome.error === 'disabled') throw AuthErrors.user_disabled();
    if (outcome.error === 'reused') throw IdentityErrors.refresh_reused();
    throw (await belongsElsewhere(ctx, parsed.id, tokenHash)) ? AuthErrors.refresh_wrong_project() : AuthErrors.refresh_not_found();
  }
  const { user_id: userId, family_id: sid, aal, amr, is_anonymous: anonymous } = outcome.session;
  const accessToken = await accessTokenFor(ctx, project, userId, { sid, aal, amr, anonymous }, { custom: custom ?? null });
  return { accessToken, refreshToken: next.raw, expiresIn: ctx.config.userAccessTokenTtl.text };
}

/** Logout: revokes the presented session (if it is this project's). Unknown tokens are ignored. */
export async function revokePresented(ctx: AppContext, project: ProjectRecord, raw: string): Promise<void> {
  const parsed = parseRefreshToken(raw);
  if (!parsed) return;
  const tokenHash = refreshTokenHash(parsed.secret);
  const revoked = await ctx.db.tenant({ projectId: project.id, keyKind: 'publishable', account: true }, async (tx) => {
    const row = await findSession(tx, parsed.id);
    if (!row || rejectionOf(row, tokenHash) === 'unknown') return false;
    await revokeSession(tx, row.id, ctx.clock.now());
    return true;
  });
  if (!revoked && (await belongsElsewhere(ctx, parsed.id, tokenHash))) throw AuthErrors.refresh_wrong_project();
}
