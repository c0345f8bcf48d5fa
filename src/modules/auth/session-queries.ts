/**
 * SQL of refresh sessions (app_user_sessions), run through `ctx.db.tenant` or `ctx.db.read`
 * (except `sessionExistsAnywhere`, which takes the owner connection).
 */
import { sql, type Kysely } from 'kysely';
import type { Tx } from '../../db/pool.js';
import type { Database } from '../../database.js';

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
}

/** Inserts a session unless the user is disabled (then false): the one check every sign-in passes. */
export async function insertSession(tx: Tx, s: NewSession): Promise<boolean> {
  const res = await sql`
    INSERT INTO app_user_sessions
      (id, project_id, user_id, family_id, token_hash, ip, user_agent, created_at, last_used_at, expires_at)
    SELECT ${s.id}, ${s.projectId}, ${s.userId}, ${s.familyId}, ${s.tokenHash}, ${s.ip}, ${s.userAgent}, ${s.now}, ${s.now}, ${s.expiresAt}
    WHERE NOT EXISTS (SELECT 1 FROM app_users WHERE id = ${s.userId} AND disabled_at IS NOT NULL)
    RETURNING id`.execute(tx);
  return res.rows.length > 0;
}

/**
 * The whole rotation in one statement: the presented session is consumed only if its hash
 * matches and it is live (unused, unrevoked, unexpired), and its successor is inserted in the
 * same family. No row back means the token was not accepted (the caller finds out why).
 */
export async function rotateSession(
  tx: Tx,
  r: { id: string; tokenHash: string; next: Omit<NewSession, 'projectId' | 'userId' | 'familyId'> },
): Promise<{ user_id: string } | null> {
  const { next } = r;
  const res = await sql<{ user_id: string }>`
    WITH old AS (
      UPDATE app_user_sessions
         SET used_at = ${next.now}, last_used_at = ${next.now}, rotated_to = ${next.id}
       WHERE id = ${r.id} AND token_hash = ${r.tokenHash}
         AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ${next.now}
         AND NOT EXISTS (SELECT 1 FROM app_users u WHERE u.id = app_user_sessions.user_id AND u.disabled_at IS NOT NULL)
      RETURNING project_id, user_id, family_id)
    INSERT INTO app_user_sessions
      (id, project_id, user_id, family_id, token_hash, ip, user_agent, created_at, last_used_at, expires_at)
    SELECT ${next.id}, project_id, user_id, family_id, ${next.tokenHash}, ${next.ip}, ${next.userAgent},
           ${next.now}, ${next.now}, ${next.expiresAt}
      FROM old
    RETURNING user_id`.execute(tx);
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
