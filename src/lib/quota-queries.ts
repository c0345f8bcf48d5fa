/**
 * Quota counters (table usage_counters). The guard lives in SQL, once
 * (sql/05_quota_functions.sql): a reservation adds `amount` only if the result stays within
 * `limit`, so concurrent reservations can never overspend. `reserve`/`refund` run inside the
 * transaction of the work they pay for; `reserveAhead`/`refundAhead` as their own statement.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';

/** Every counter kept in usage_counters: one name each, used by whoever charges or reads it. */
export const METRICS = {
  /** Database bytes per project (period ''). */
  dbBytes: 'db_bytes',
  /** Stored file bytes per project (period ''). */
  storageBytes: 'storage_bytes',
  /** Mails per project per UTC month. */
  mail: 'mail',
  /** Platform-key AI sessions per operator per UTC month. */
  aiSessions: 'ai_sessions',
} as const;

export interface Counter {
  subjectId: string;
  metric: string;
  period?: string;
}

/** A plan limit as the guard's cap (-1, unlimited, becomes the largest safe integer). */
export const quotaCap = (limit: number) => (limit < 0 ? Number.MAX_SAFE_INTEGER : limit);

/** Returns the new usage, or null when the reservation would exceed the limit (-1: unlimited). */
export async function reserve(db: Kysely<Database>, c: Counter, amount: number, limit: number): Promise<number | null> {
  return guarded(db, 'plinth_reserve', c, amount, limit);
}

export async function refund(db: Kysely<Database>, c: Counter, amount: number): Promise<void> {
  await sql`SELECT plinth_refund(${c.subjectId}, ${c.metric}, ${c.period ?? ''}, ${amount}::bigint)`.execute(db);
}

async function guarded(db: Kysely<Database>, fn: 'plinth_reserve' | 'plinth_reserve_ahead', c: Counter, amount: number, limit: number) {
  if (limit >= 0 && amount > limit) return null; // saves the round trip: the SQL guard refuses it too
  const row = await sql<{ used: number | null }>`
    SELECT ${sql.ref(fn)}(${c.subjectId}, ${c.metric}, ${c.period ?? ''}, ${amount}::bigint, ${quotaCap(limit)}::bigint) AS used`.execute(db);
  return row.rows[0]?.used ?? null;
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
  return guarded(db, 'plinth_reserve_ahead', c, amount, limit);
}

export async function refundAhead(db: Kysely<Database>, c: Counter, amount: number): Promise<void> {
  if (amount <= 0) return;
  await sql`SELECT plinth_refund_ahead(${c.subjectId}, ${c.metric}, ${c.period ?? ''}, ${amount}::bigint)`.execute(db);
}
