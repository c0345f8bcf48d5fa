/**
 * Transactional quota counters (table usage_counters). `reserve` is one guarded upsert: it
 * adds `amount` only if the result stays within `limit`, so concurrent reservations can never
 * overspend. Run it in the same transaction as the work it pays for; `refund` is the inverse.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';

export interface Counter {
  subjectId: string;
  metric: string;
  period?: string;
}

/** Returns the new usage, or null when the reservation would exceed the limit (-1: unlimited). */
export async function reserve(db: Kysely<Database>, c: Counter, amount: number, limit: number): Promise<number | null> {
  const period = c.period ?? '';
  if (limit >= 0 && amount > limit) return null;
  const cap = limit < 0 ? Number.MAX_SAFE_INTEGER : limit;
  const row = await sql<{ used: number }>`
    INSERT INTO usage_counters (subject_id, metric, period, used)
    VALUES (${c.subjectId}, ${c.metric}, ${period}, ${amount})
    ON CONFLICT (subject_id, metric, period)
    DO UPDATE SET used = usage_counters.used + excluded.used
    WHERE usage_counters.used + excluded.used <= ${cap}
    RETURNING used`.execute(db);
  return row.rows[0]?.used ?? null;
}

export async function refund(db: Kysely<Database>, c: Counter, amount: number): Promise<void> {
  await sql`
    UPDATE usage_counters SET used = greatest(used - ${amount}, 0)
    WHERE subject_id = ${c.subjectId} AND metric = ${c.metric} AND period = ${c.period ?? ''}`.execute(db);
}

export async function usage(db: Kysely<Database>, c: Counter): Promise<number> {
  const row = await db
    .selectFrom('usage_counters')
    .select('used')
    .where('subject_id', '=', c.subjectId)
    .where('metric', '=', c.metric)
    .where('period', '=', c.period ?? '')
    .executeTakeFirst();
  return row?.used ?? 0;
}

/**
 * Like `reserve`, but as its own autocommit statement committed without waiting for the disk
 * (see sql/05_quota_functions.sql). Call it on a connection that is NOT inside a transaction
 * (`ctx.db.read`), before the write it pays for; `refundAhead` if that write then fails.
 */
export async function reserveAhead(db: Kysely<Database>, c: Counter, amount: number, limit: number): Promise<number | null> {
  if (limit >= 0 && amount > limit) return null;
  const cap = limit < 0 ? Number.MAX_SAFE_INTEGER : limit;
  const row = await sql<{ used: number | null }>`
    SELECT plinth_reserve_ahead(${c.subjectId}, ${c.metric}, ${c.period ?? ''}, ${amount}::bigint, ${cap}::bigint) AS used`.execute(db);
  return row.rows[0]?.used ?? null;
}

export async function refundAhead(db: Kysely<Database>, c: Counter, amount: number): Promise<void> {
  if (amount <= 0) return;
  await sql`SELECT plinth_refund_ahead(${c.subjectId}, ${c.metric}, ${c.period ?? ''}, ${amount}::bigint)`.execute(db);
}
