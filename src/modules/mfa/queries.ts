/**
 * SQL of end users' TOTP factors, recovery codes, MFA challenges and the per-account failure
 * budget, run in the project's tenant scope (`ctx.db.tenant` / `ctx.db.read`). Every spend is
 * one conditional statement, so concurrent requests cannot use one thing twice.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { Tx } from '../../db/pool.js';
import type { Encrypted } from '../../lib/crypto.js';
import type { AmrEntry } from '../../lib/identity/assurance.js';

export async function findTotp(tx: Tx, userId: string) {
  return tx.selectFrom('app_user_totp').select(['secret', 'verified_at', 'last_step', 'created_at']).where('user_id', '=', userId).executeTakeFirst();
}

/** Starts (or restarts) an unverified enrolment; a verified factor is left alone (false). */
export async function upsertPendingTotp(tx: Tx, userId: string, projectId: string, secret: Encrypted, now: Date): Promise<boolean> {
  const res = await sql`
    INSERT INTO app_user_totp (user_id, project_id, secret, created_at)
    VALUES (${userId}, ${projectId}, ${JSON.stringify(secret)}::jsonb, ${now})
    ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, created_at = EXCLUDED.created_at, last_step = NULL
      WHERE app_user_totp.verified_at IS NULL
    RETURNING user_id`.execute(tx);
  return res.rows.length > 0;
}

/**
 * Accepts step `step` for the user's factor: only if it is newer than the last accepted one
 * (a replay, even concurrent, finds no row). `confirm` accepts the first code of an enrolment.
 */
export async function acceptTotpStep(tx: Tx, userId: string, step: number, now: Date, confirm: boolean): Promise<boolean> {
  const res = await tx
    .updateTable('app_user_totp')
    .set(confirm ? { last_step: step, verified_at: now } : { last_step: step })
    .where('user_id', '=', userId)
    .where('verified_at', confirm ? 'is' : 'is not', null)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function deleteTotp(tx: Tx, userId: string): Promise<void> {
  await tx.deleteFrom('app_user_totp').where('user_id', '=', userId).execute();
}

/** Replaces the user's whole set of recovery codes (the old set is void). */
export async function replaceRecoveryCodes(tx: Tx, userId: string, projectId: string, hashes: string[], now: Date): Promise<void> {
  await tx.deleteFrom('app_user_recovery_codes').where('user_id', '=', userId).execute();
  if (!hashes.length) return;
  await tx
    .insertInto('app_user_recovery_codes')
    .values(hashes.map((code_hash) => ({ user_id: userId, project_id: projectId, code_hash, created_at: now })))
    .execute();
}

/** Spends one code: one conditional UPDATE, so a code works once even under concurrent use. */
export async function spendRecoveryCode(tx: Tx, userId: string, codeHash: string, now: Date): Promise<boolean> {
  const res = await tx
    .updateTable('app_user_recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function countRecoveryCodesLeft(tx: Tx, userId: string): Promise<number> {
  const row = await tx
    .selectFrom('app_user_recovery_codes')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Which second factors the user has: a verified TOTP factor, how many passkeys. */
export async function factorSummary(tx: Tx, userId: string): Promise<{ totp: boolean; passkeys: number }> {
  const { rows } = await sql<{ totp: boolean; passkeys: string }>`
    SELECT EXISTS (SELECT 1 FROM app_user_totp WHERE user_id = ${userId} AND verified_at IS NOT NULL) AS totp,
           (SELECT count(*) FROM app_user_passkeys WHERE user_id = ${userId}) AS passkeys`.execute(tx);
  return { totp: rows[0]!.totp, passkeys: Number(rows[0]!.passkeys) };
}

export interface NewChallenge {
  idHash: string;
  projectId: string;
  userId: string;
  amr: AmrEntry[];
  webauthnChallenge: string | null;
  now: Date;
  expiresAt: Date;
}

export async function insertChallenge(tx: Tx, c: NewChallenge): Promise<void> {
  await tx
    .insertInto('app_user_mfa_challenges')
    .values({
      id_hash: c.idHash,
      project_id: c.projectId,
      user_id: c.userId,
      amr: JSON.stringify(c.amr),
      webauthn_challenge: c.webauthnChallenge,
      created_at: c.now,
      expires_at: c.expiresAt,
    })
    .execute();
}

/** Counts one try on a live challenge; null when it is unknown, expired or out of tries. */
export async function tryChallenge(tx: Tx, idHash: string, maxTries: number, now: Date) {
  return tx
    .updateTable('app_user_mfa_challenges')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id_hash', '=', idHash)
    .where('attempts', '<', maxTries)
    .where('expires_at', '>', now)
    .returning(['user_id', 'amr', 'webauthn_challenge'])
    .executeTakeFirst();
}

/** Takes the challenge out (the success that uses it): false when another request took it first. */
export async function takeChallenge(tx: Tx, idHash: string, userId: string): Promise<boolean> {
  const res = await tx.deleteFrom('app_user_mfa_challenges').where('id_hash', '=', idHash).where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** The crontab's sweep (owner connection, every project): expired challenges and ceremonies. */
export async function deleteExpiredChallenges(admin: Kysely<Database>, now: Date): Promise<void> {
  await admin.deleteFrom('app_user_mfa_challenges').where('expires_at', '<=', now).execute();
  await admin.deleteFrom('app_user_webauthn_challenges').where('expires_at', '<=', now).execute();
}

/**
 * Reserves one try of the account's budget (`limit` per `windowSeconds`), counted before the
 * code is checked so a burst of concurrent guesses cannot exceed it. False: the budget is spent.
 */
export async function reserveFailure(tx: Tx, userId: string, projectId: string, limit: number, windowSeconds: number, now: Date): Promise<boolean> {
  const windowEnd = sql`f.window_start + make_interval(secs => ${windowSeconds})`;
  const res = await sql`
    INSERT INTO app_user_mfa_failures AS f (user_id, project_id, failures, window_start)
    VALUES (${userId}, ${projectId}, 1, ${now})
    ON CONFLICT (user_id) DO UPDATE SET
      failures = CASE WHEN ${windowEnd} <= ${now} THEN 1 ELSE f.failures + 1 END,
      window_start = CASE WHEN ${windowEnd} <= ${now} THEN ${now} ELSE f.window_start END
      WHERE ${windowEnd} <= ${now} OR f.failures < ${limit}
    RETURNING failures`.execute(tx);
  return res.rows.length > 0;
}

/** A right answer gives the reserved try back. */
export async function releaseFailure(tx: Tx, userId: string): Promise<void> {
  await tx
    .updateTable('app_user_mfa_failures')
    .set((eb) => ({ failures: sql`greatest(${eb.ref('failures')} - 1, 0)` }))
    .where('user_id', '=', userId)
    .execute();
}

/** Everything second-factor of a user (an operator's reset): factor, codes, passkeys, challenges. */
export async function deleteAllFactors(tx: Tx, userId: string): Promise<void> {
  await tx.deleteFrom('app_user_totp').where('user_id', '=', userId).execute();
  await tx.deleteFrom('app_user_recovery_codes').where('user_id', '=', userId).execute();
  await tx.deleteFrom('app_user_passkeys').where('user_id', '=', userId).execute();
  await tx.deleteFrom('app_user_mfa_challenges').where('user_id', '=', userId).execute();
}

/** A live challenge (not counting a try): to prepare a passkey ceremony for it. */
export async function findLiveChallenge(tx: Tx, idHash: string, now: Date) {
  return tx
    .selectFrom('app_user_mfa_challenges')
    .select(['user_id', 'attempts'])
    .where('id_hash', '=', idHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}
