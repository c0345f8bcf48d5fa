/**
 * SQL of refresh sessions (app_user_sessions), run through `ctx.db.tenant` or `ctx.db.read`
 * (except `sessionExistsAnywhere`, which takes the owner connection).
 */
import { sql, type Kysely } from 'kysely';
import type { Tx } from '../../db/pool.js';
import type { Database } from '../../database.js';
import type { Aal, AmrEntry } from '../../lib/identity/assurance.js';

export interface NewSession {
  id: string;
  projectId: string;
  userId: string;
  familyId: string;
  tokenHash: string;
  ip: string | null;
  userAgent: string | null;
  now: Date;
  expiresAt: Date;
  /** The assurance the family was opened at (migrations/031_user_mfa.sql); rotations keep it. */
  aal: Aal;
  amr: AmrEntry[];
}

/**
 * Inserts a session unless the user is disabled (then null): the one check every sign-in
 * passes. Returns whether the user is anonymous, for the token's `isAnonymous` claim.
 */
export async function insertSession(tx: Tx, s: NewSession): Promise<{ isAnonymous: boolean } | null> {
  const res = await sql<{ is_anonymous: boolean }>`
    WITH u AS (SELECT is_anonymous FROM app_users WHERE id = ${s.userId} AND disabled_at IS NULL),
    ins AS (
      INSERT INTO app_user_sessions
        (id, project_id, user_id, family_id, token_hash, ip, user_agent, created_at, last_used_at, expires_at, aal, amr)
      SELECT ${s.id}, ${s.projectId}, ${s.userId}, ${s.familyId}, ${s.tokenHash}, ${s.ip}, ${s.userAgent}, ${s.now}, ${s.now}, ${s.expiresAt},
             ${s.aal}, ${JSON.stringify(s.amr)}::jsonb
        FROM u
      RETURNING id)
    SELECT u.is_anonymous FROM u, ins`.execute(tx);
  const row = res.rows[0];
  return row ? { isAnonymous: row.is_anonymous } : null;
}

export interface RotatedSession {
  user_id: string;
  family_id: string;
  aal: Aal;
  amr: AmrEntry[];
  is_anonymous: boolean;
}

/**
 * The whole rotation in one statement: the presented session is consumed only if its hash
 * matches and it is live (unused, unrevoked, unexpired), and its successor is inserted in the
 * same family. No row back means the token was not accepted (the caller finds out why).
 */
export async function rotateSession(
  tx: Tx,
  r: { id: string; tokenHash: string; next: Omit<NewSession, 'projectId' | 'userId' | 'familyId' | 'aal' | 'amr'> },
): Promise<RotatedSession | null> {
  const { next } = r;
  const res = await sql<RotatedSession>`
    WITH old AS (
      UPDATE app_user_sessions
         SET used_at = ${next.now}, last_used_at = ${next.now}, rotated_to = ${next.id}
       WHERE id = ${r.id} AND token_hash = ${r.tokenHash}
         AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ${next.now}
         AND NOT EXISTS (SELECT 1 FROM app_users u WHERE u.id = app_user_sessions.user_id AND u.disabled_at IS NOT NULL)
      RETURNING project_id, user_id, family_id, aal, amr)
    , ins AS (
      INSERT INTO app_user_sessions
        (id, project_id, user_id, family_id, token_hash, ip, user_agent, created_at, last_used_at, expires_at, aal, amr)
      SELECT ${next.id}, project_id, user_id, family_id, ${next.tokenHash}, ${next.ip}, ${next.userAgent},
             ${next.now}, ${next.now}, ${next.expiresAt}, aal, amr
        FROM old
      RETURNING user_id, family_id, aal, amr)
    SELECT ins.user_id, ins.family_id, ins.aal, ins.amr, u.is_anonymous FROM ins JOIN app_users u ON u.id = ins.user_id`.execute(tx);
  return res.rows[0] ?? null;
}

export async function findSession(tx: Tx, id: string) {
  return tx
    .selectFrom('app_user_sessions')
    .select(['id', 'user_id', 'family_id', 'token_hash', 'used_at', 'revoked_at', 'expires_at'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function revokeFamily(tx: Tx, familyId: string, now: Date): Promise<void> {
  await tx
    .updateTable('app_user_sessions')
    .set({ revoked_at: now })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Removes a session row outright: one whose tokens were never issued (sessions.ts issueSession). */
export async function deleteSession(tx: Tx, id: string): Promise<void> {
  await tx.deleteFrom('app_user_sessions').where('id', '=', id).execute();
}

export async function revokeSession(tx: Tx, id: string, now: Date): Promise<void> {
  await tx.updateTable('app_user_sessions').set({ revoked_at: now }).where('id', '=', id).execute();
}

export async function isUserDisabled(tx: Tx, userId: string): Promise<boolean> {
  const row = await tx.selectFrom('app_users').select('disabled_at').where('id', '=', userId).executeTakeFirst();
  return !!row?.disabled_at;
}

/** Whether a session with this id and token hash exists in any project (owner connection: RLS would hide other projects'). */
export async function sessionExistsAnywhere(admin: Kysely<Database>, id: string, tokenHash: string): Promise<boolean> {
  const row = await admin.selectFrom('app_user_sessions').select('id').where('id', '=', id).where('token_hash', '=', tokenHash).executeTakeFirst();
  return !!row;
}

export async function revokeUserSessions(tx: Tx, userId: string, now: Date): Promise<number> {
  const res = await tx
    .updateTable('app_user_sessions')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Live sessions of a user: the newest token of each family that is neither used, revoked nor expired. */
export async function listLiveSessions(tx: Tx, userId: string, now: Date) {
  return tx
    .selectFrom('app_user_sessions')
    .select(['id', 'family_id', 'ip', 'user_agent', 'created_at', 'last_used_at', 'expires_at'])
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('last_used_at', 'desc')
    .execute();
}

/**
 * Sets the assurance of the live session of a family (a step-up or a confirmed enrolment);
 * its successors inherit it. Returns whether a live session was found.
 */
export async function raiseSessionAssurance(tx: Tx, familyId: string, userId: string, aal: Aal, amr: AmrEntry[], now: Date): Promise<boolean> {
  const res = await tx
    .updateTable('app_user_sessions')
    .set({ aal, amr: JSON.stringify(amr) })
    .where('family_id', '=', familyId)
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Every aal2 session of a user falls back to aal1 (its second factor was removed or reset). */
export async function lowerUserSessions(tx: Tx, userId: string): Promise<void> {
  await tx.updateTable('app_user_sessions').set({ aal: 'aal1' }).where('user_id', '=', userId).where('aal', '=', 'aal2').execute();
}

// ---- a user's own sessions (GET/DELETE /api/userAuth/sessions) ----

export interface OwnSessionRow {
  family_id: string;
  ip: string | null;
  user_agent: string | null;
  signed_in_at: Date;
  last_used_at: Date;
  expires_at: Date;
  aal: Aal;
}

/** The user's live session families (their newest token), most recently used first; each with the time it was opened. */
export async function listOwnSessions(tx: Tx, userId: string, now: Date, limit = 100): Promise<OwnSessionRow[]> {
  const res = await sql<OwnSessionRow>`
    SELECT s.family_id, s.ip, s.user_agent, s.last_used_at, s.expires_at, s.aal,
           (SELECT min(f.created_at) FROM app_user_sessions f WHERE f.family_id = s.family_id) AS signed_in_at
      FROM app_user_sessions s
     WHERE s.user_id = ${userId} AND s.used_at IS NULL AND s.revoked_at IS NULL AND s.expires_at > ${now}
     ORDER BY s.last_used_at DESC
     LIMIT ${limit}`.execute(tx);
  return res.rows;
}

/** Revokes one of the user's session families; 0 when it is not theirs (or already ended). */
export async function revokeOwnFamily(tx: Tx, userId: string, familyId: string, now: Date): Promise<number> {
  const res = await tx
    .updateTable('app_user_sessions')
    .set({ revoked_at: now })
    .where('family_id', '=', familyId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Revokes every session of the user except the family `keep`; returns how many families ended. */
export async function revokeOtherFamilies(tx: Tx, userId: string, keep: string, now: Date): Promise<number> {
  const res = await sql<{ n: number }>`
    WITH ended AS (
      UPDATE app_user_sessions SET revoked_at = ${now}
       WHERE user_id = ${userId} AND family_id <> ${keep} AND revoked_at IS NULL
      RETURNING family_id, used_at, expires_at)
    SELECT count(*)::int AS n FROM ended WHERE used_at IS NULL AND expires_at > ${now}`.execute(tx);
  return res.rows[0]?.n ?? 0;
}
