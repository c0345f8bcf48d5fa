/**
 * SQL of operators' second factors (migrations/032_operator_mfa.sql), through the owner
 * connection. The statements mirror the end users' (src/modules/mfa/queries.ts): every spend
 * is one conditional statement.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { Encrypted } from '../../lib/crypto.js';
import type { AmrEntry } from '../../lib/identity/assurance.js';

type Db = Kysely<Database>;

export function findOperatorTotp(db: Db, operatorId: string) {
  return db.selectFrom('operator_totp').select(['secret', 'verified_at', 'last_step', 'created_at']).where('operator_id', '=', operatorId).executeTakeFirst();
}

export async function upsertPendingOperatorTotp(db: Db, operatorId: string, secret: Encrypted, now: Date): Promise<boolean> {
  const res = await sql`
    INSERT INTO operator_totp (operator_id, secret, created_at) VALUES (${operatorId}, ${JSON.stringify(secret)}::jsonb, ${now})
    ON CONFLICT (operator_id) DO UPDATE SET secret = EXCLUDED.secret, created_at = EXCLUDED.created_at, last_step = NULL
      WHERE operator_totp.verified_at IS NULL
    RETURNING operator_id`.execute(db);
  return res.rows.length > 0;
}

export async function acceptOperatorTotpStep(db: Db, operatorId: string, step: number, now: Date, confirm: boolean): Promise<boolean> {
  const res = await db
    .updateTable('operator_totp')
    .set(confirm ? { last_step: step, verified_at: now } : { last_step: step })
    .where('operator_id', '=', operatorId)
    .where('verified_at', confirm ? 'is' : 'is not', null)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function replaceOperatorRecoveryCodes(db: Db, operatorId: string, hashes: string[], now: Date): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('operator_recovery_codes').where('operator_id', '=', operatorId).execute();
    if (hashes.length) await tx.insertInto('operator_recovery_codes').values(hashes.map((code_hash) => ({ operator_id: operatorId, code_hash, created_at: now }))).execute();
  });
}

export async function spendOperatorRecoveryCode(db: Db, operatorId: string, codeHash: string, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('operator_recovery_codes')
    .set({ used_at: now })
    .where('operator_id', '=', operatorId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function countOperatorRecoveryCodesLeft(db: Db, operatorId: string): Promise<number> {
  const row = await db
    .selectFrom('operator_recovery_codes')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('operator_id', '=', operatorId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertOperatorChallenge(db: Db, c: { idHash: string; operatorId: string; amr: AmrEntry[]; now: Date; expiresAt: Date }): Promise<void> {
  await db
    .insertInto('operator_mfa_challenges')
    .values({ id_hash: c.idHash, operator_id: c.operatorId, amr: JSON.stringify(c.amr), created_at: c.now, expires_at: c.expiresAt })
    .execute();
}

export function tryOperatorChallenge(db: Db, idHash: string, maxTries: number, now: Date) {
  return db
    .updateTable('operator_mfa_challenges')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id_hash', '=', idHash)
    .where('attempts', '<', maxTries)
    .where('expires_at', '>', now)
    .returning(['operator_id', 'amr', 'webauthn_challenge'])
    .executeTakeFirst();
}

export async function takeOperatorChallenge(db: Db, idHash: string): Promise<boolean> {
  const res = await db.deleteFrom('operator_mfa_challenges').where('id_hash', '=', idHash).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export async function reserveOperatorFailure(db: Db, operatorId: string, limit: number, windowSeconds: number, now: Date): Promise<boolean> {
  const windowEnd = sql`f.window_start + make_interval(secs => ${windowSeconds})`;
  const res = await sql`
    INSERT INTO operator_mfa_failures AS f (operator_id, failures, window_start) VALUES (${operatorId}, 1, ${now})
    ON CONFLICT (operator_id) DO UPDATE SET
      failures = CASE WHEN ${windowEnd} <= ${now} THEN 1 ELSE f.failures + 1 END,
      window_start = CASE WHEN ${windowEnd} <= ${now} THEN ${now} ELSE f.window_start END
      WHERE ${windowEnd} <= ${now} OR f.failures < ${limit}
    RETURNING failures`.execute(db);
  return res.rows.length > 0;
}

export async function releaseOperatorFailure(db: Db, operatorId: string): Promise<void> {
  await db.updateTable('operator_mfa_failures').set({ failures: sql`greatest(failures - 1, 0)` }).where('operator_id', '=', operatorId).execute();
}

export async function setPlatformSetting(db: Db, key: string, value: Record<string, unknown>, now: Date): Promise<void> {
  await db
    .insertInto('platform_settings')
    .values({ key, value: JSON.stringify(value), updated_at: now })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(value), updated_at: now }))
    .execute();
}

export async function platformSetting(db: Db, key: string): Promise<Record<string, unknown> | null> {
  const row = await db.selectFrom('platform_settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value ?? null;
}
