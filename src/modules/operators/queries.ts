/** SQL of the operators domain: accounts, refresh sessions, one-time codes. */
import { sql, type Kysely } from 'kysely';
import type { Aal, AmrEntry } from '../../lib/identity/assurance.js';
import type { Database } from '../../database.js';
import type { OtpPurpose } from './tables.js';

type Db = Kysely<Database>;

export const OPERATOR_COLUMNS = ['id', 'email', 'name', 'plan', 'is_verified', 'created_at', 'updated_at'] as const;

export function findOperatorByEmail(db: Db, email: string) {
  return db.selectFrom('operators').select([...OPERATOR_COLUMNS, 'password_hash']).where('email', '=', email).executeTakeFirst();
}

export function findOperatorById(db: Db, id: string) {
  return db.selectFrom('operators').select([...OPERATOR_COLUMNS, 'password_hash']).where('id', '=', id).executeTakeFirst();
}

export type OperatorRow = NonNullable<Awaited<ReturnType<typeof findOperatorById>>>;

/** Inserts an operator; returns undefined when the email is taken (no exception to map). */
export function insertOperator(db: Db, row: { email: string; passwordHash: string; name: string | null; verified: boolean; now: Date }) {
  return db
    .insertInto('operators')
    .values({ email: row.email, password_hash: row.passwordHash, name: row.name, is_verified: row.verified, ai_key: null, created_at: row.now, updated_at: row.now })
    .onConflict((oc) => oc.column('email').doNothing())
    .returning([...OPERATOR_COLUMNS, 'password_hash'])
    .executeTakeFirst();
}

export function updateOperator(db: Db, id: string, patch: { password_hash?: string; is_verified?: boolean; plan?: 'free' | 'pro'; tokens_valid_after?: Date }, now: Date) {
  return db.updateTable('operators').set({ ...patch, updated_at: now }).where('id', '=', id).returning(OPERATOR_COLUMNS).executeTakeFirst();
}

/**
 * What the dashboard's authentication needs of an operator, by id: with whether they have a
 * second factor and whether the admin requires one (one statement per request).
 */
export function findOperatorIdentity(db: Db, id: string, sid: string | null) {
  return db
    .selectFrom('operators')
    .select(['id', 'email', 'name', 'plan', 'is_verified', 'tokens_valid_after'])
    .select(sql<boolean>`(EXISTS (SELECT 1 FROM operator_totp t WHERE t.operator_id = operators.id AND t.verified_at IS NOT NULL)
      OR EXISTS (SELECT 1 FROM operator_passkeys k WHERE k.operator_id = operators.id))`.as('has_second_factor'))
    .select(sql<boolean>`COALESCE((SELECT (value ->> 'required')::boolean FROM platform_settings WHERE key = 'operator_mfa'), false)`.as('mfa_required'))
    // The token's session: revoked (logout, revoked from the sessions list) ends it at once.
    .select(sid === null ? sql<boolean>`true`.as('session_live') : sql<boolean>`EXISTS (SELECT 1 FROM operator_sessions s
      WHERE s.family_id = ${sid} AND s.operator_id = operators.id AND s.revoked_at IS NULL)`.as('session_live'))
    .where('id', '=', id)
    .executeTakeFirst();
}

// Sessions

export function insertSession(db: Db, s: { operatorId: string; familyId: string; tokenHash: string; expiresAt: Date; now: Date; aal: Aal; amr: AmrEntry[] }) {
  return db
    .insertInto('operator_sessions')
    .values({ operator_id: s.operatorId, family_id: s.familyId, token_hash: s.tokenHash, expires_at: s.expiresAt, created_at: s.now, aal: s.aal, amr: JSON.stringify(s.amr) })
    .returning(['id'])
    .executeTakeFirstOrThrow();
}

/** Marks a live token used, atomically: of two concurrent refreshes only one wins. */
export function consumeSession(db: Db, tokenHash: string, now: Date) {
  return db
    .updateTable('operator_sessions')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['operator_id', 'family_id', 'aal', 'amr'])
    .executeTakeFirst();
}

export function findSession(db: Db, tokenHash: string) {
  return db.selectFrom('operator_sessions').select(['operator_id', 'family_id', 'token_hash', 'used_at', 'revoked_at', 'expires_at']).where('token_hash', '=', tokenHash).executeTakeFirst();
}

export function revokeFamily(db: Db, familyId: string, now: Date) {
  return db.updateTable('operator_sessions').set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
}

/** Stores the client of the request a session row was issued to. */
export function setSessionClient(db: Db, tokenHash: string, ip: string | null, userAgent: string | null) {
  return db.updateTable('operator_sessions').set({ ip, user_agent: userAgent }).where('token_hash', '=', tokenHash).execute();
}

export interface OperatorSessionRow {
  family_id: string;
  ip: string | null;
  user_agent: string | null;
  aal: Aal;
  amr: AmrEntry[];
  /** When the session's latest token was issued (its sign-in or last refresh). */
  last_used_at: Date;
  expires_at: Date;
  signed_in_at: Date;
}

/** The operator's live sessions: one row per family (its live token), most recently used first. */
export async function listOperatorSessions(db: Db, operatorId: string, now: Date, limit = 100): Promise<OperatorSessionRow[]> {
  const res = await sql<OperatorSessionRow>`
    SELECT s.family_id, s.ip, s.user_agent, s.aal, s.amr, s.created_at AS last_used_at, s.expires_at,
           (SELECT min(f.created_at) FROM operator_sessions f WHERE f.family_id = s.family_id) AS signed_in_at
      FROM operator_sessions s
     WHERE s.operator_id = ${operatorId} AND s.used_at IS NULL AND s.revoked_at IS NULL AND s.expires_at > ${now}
     ORDER BY s.created_at DESC
     LIMIT ${limit}`.execute(db);
  return res.rows;
}

/** Revokes one of the operator's session families; 0 when it is not theirs (or already ended). */
export async function revokeOperatorFamily(db: Db, operatorId: string, familyId: string, now: Date): Promise<number> {
  const res = await db
    .updateTable('operator_sessions')
    .set({ revoked_at: now })
    .where('family_id', '=', familyId)
    .where('operator_id', '=', operatorId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Revokes every live session of the operator but the family `keep`; returns how many sessions ended. */
export async function revokeOtherOperatorFamilies(db: Db, operatorId: string, keep: string | null, now: Date): Promise<number> {
  const res = await sql<{ n: number }>`
    WITH ended AS (
      UPDATE operator_sessions SET revoked_at = ${now}
       WHERE operator_id = ${operatorId} AND revoked_at IS NULL ${keep === null ? sql`` : sql`AND family_id <> ${keep}`}
      RETURNING used_at, expires_at)
    SELECT count(*)::int AS n FROM ended WHERE used_at IS NULL AND expires_at > ${now}`.execute(db);
  return res.rows[0]?.n ?? 0;
}

export function revokeAllSessions(db: Db, operatorId: string, now: Date) {
  return db.updateTable('operator_sessions').set({ revoked_at: now }).where('operator_id', '=', operatorId).where('revoked_at', 'is', null).execute();
}

// One-time codes

export function findOtp(db: Db, operatorId: string, purpose: OtpPurpose) {
  return db.selectFrom('operator_otps').selectAll().where('operator_id', '=', operatorId).where('purpose', '=', purpose).executeTakeFirst();
}

export function upsertOtp(db: Db, o: { operatorId: string; purpose: OtpPurpose; codeHash: string; expiresAt: Date; now: Date }) {
  const values = { code_hash: o.codeHash, attempts: 0, expires_at: o.expiresAt, sent_at: o.now };
  return db
    .insertInto('operator_otps')
    .values({ operator_id: o.operatorId, purpose: o.purpose, ...values })
    .onConflict((oc) => oc.columns(['operator_id', 'purpose']).doUpdateSet(values))
    .execute();
}

/** Counts one wrong attempt; returns the attempts made so far. */
export async function bumpOtpAttempts(db: Db, operatorId: string, purpose: OtpPurpose): Promise<number> {
  const r = await db
    .updateTable('operator_otps')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('operator_id', '=', operatorId)
    .where('purpose', '=', purpose)
    .returning('attempts')
    .executeTakeFirst();
  return r?.attempts ?? 0;
}

export function deleteOtp(db: Db, operatorId: string, purpose: OtpPurpose) {
  return db.deleteFrom('operator_otps').where('operator_id', '=', operatorId).where('purpose', '=', purpose).execute();
}
