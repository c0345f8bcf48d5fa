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
export function findOperatorIdentity(db: Db, id: string) {
  return db
    .selectFrom('operators')
    .select(['id', 'email', 'name', 'plan', 'is_verified', 'tokens_valid_after'])
    .select(sql<boolean>`(EXISTS (SELECT 1 FROM operator_totp t WHERE t.operator_id = operators.id AND t.verified_at IS NOT NULL)
      OR EXISTS (SELECT 1 FROM operator_passkeys k WHERE k.operator_id = operators.id))`.as('has_second_factor'))
    .select(sql<boolean>`COALESCE((SELECT (value ->> 'required')::boolean FROM platform_settings WHERE key = 'operator_mfa'), false)`.as('mfa_required'))
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
