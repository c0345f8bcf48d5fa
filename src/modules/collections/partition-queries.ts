/**
 * Each collection's documents live in their own partition of `documents`
 * (`documents_<collectionId>`, migrations/009_documents_partitioned.sql): created with the
 * collection, emptied and detached with it.
 *
 * Locks, because every tenant shares the parent table:
 * - creating: the table is made and then ATTACHed, which takes only a SHARE UPDATE EXCLUSIVE
 *   lock on the parent (`CREATE TABLE ... PARTITION OF` would take ACCESS EXCLUSIVE and queue
 *   every tenant's queries behind any long-running one);
 * - deleting: TRUNCATE locks the partition alone, inside the deleting transaction; the empty
 *   partition is then detached CONCURRENTLY (again no exclusive lock on the parent) and
 *   dropped. That step runs outside any transaction, after the commit; if it is interrupted,
 *   `dropOrphanPartitions` finishes it later (every deletion enqueues it as a job too).
 *
 * The API roles may only SELECT from a partition, under policies that mirror the parent's for
 * that collection (triggers on `collections`, sql/20_documents_policies.sql): reads name
 * the partition, which PostgreSQL plans for in half the time; writes go through the parent.
 */
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import type { Database } from '../../database.js';
import { isObjectId } from '../../lib/ids.js';
import { METRICS } from '../../lib/quota-queries.js';

/** The partition's name; collection ids are validated 24-hex, so it never needs quoting. */
export function partitionName(collectionId: string): string {
  if (!isObjectId(collectionId)) throw new Error('bad collection id');
  return `documents_${collectionId}`;
}

/** Creates and attaches a new collection's (empty) partition, in the creating transaction. */
export async function createPartition(db: Kysely<Database>, collectionId: string): Promise<void> {
  const name = partitionName(collectionId);
  await sql.raw(`CREATE TABLE ${name} (LIKE documents INCLUDING DEFAULTS)`).execute(db);
  await sql.raw(`ALTER TABLE ${name} ENABLE ROW LEVEL SECURITY`).execute(db);
  await sql.raw(`ALTER TABLE documents ATTACH PARTITION ${name} FOR VALUES IN ('${collectionId}')`).execute(db);
  // Its read policies come from a trigger when this transaction commits (sql/20_documents_policies.sql).
}

/**
 * Empties a collection's partition in the deleting transaction; returns the bytes its
 * documents were charged. The lock comes first, so no write slips in between sum and truncate.
 */
export async function truncatePartition(db: Kysely<Database>, collectionId: string): Promise<number> {
  const name = partitionName(collectionId);
  await sql.raw(`LOCK TABLE ${name} IN ACCESS EXCLUSIVE MODE`).execute(db);
  const res = await sql<{ n: number | null }>`SELECT sum(size_bytes)::bigint AS n FROM ${sql.table(name)}`.execute(db);
  await sql.raw(`TRUNCATE ${name}`).execute(db);
  return Number(res.rows[0]?.n ?? 0);
}

interface Orphan {
  collectionId: string;
  attached: boolean;
  pending: boolean;
}

/** Partitions (attached or already detached) whose collection no longer exists. */
async function findOrphans(client: pg.PoolClient): Promise<Orphan[]> {
  const { rows } = await client.query<Orphan>(`
    SELECT substr(c.relname, 11) AS "collectionId", i.inhrelid IS NOT NULL AS attached, coalesce(i.inhdetachpending, false) AS pending
    FROM pg_class c
    LEFT JOIN pg_inherits i ON i.inhrelid = c.oid AND i.inhparent = 'documents'::regclass
    WHERE c.relkind = 'r' AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'documents'::regclass)
      AND c.relname ~ '^documents_[0-9a-f]{24}$'
      AND NOT EXISTS (SELECT 1 FROM collections WHERE 'documents_' || collections.id = c.relname)`);
  return rows;
}

/** One cleanup at a time (the request that deleted and the backstop job run it together). */
const CLEANUP_LOCK = "hashtext('plinth.collections.drop_partitions')";

/**
 * Refunds what a detached partition still holds, then drops it, in one transaction. A write
 * routed to the partition after the deletion's TRUNCATE but before the detach (a node whose
 * cache still had the collection) was charged; nothing else would ever give those bytes back.
 */
async function refundAndDrop(client: pg.PoolClient, name: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(`
      SELECT plinth_refund(project_id, '${METRICS.dbBytes}', '', sum(size_bytes)::bigint)
      FROM ${name} GROUP BY project_id`);
    // CASCADE: an access rule of another collection that looks this one up (docs/rules.md) loses
    // that policy, and with it the access it granted (fail closed), instead of blocking the drop.
    await client.query(`DROP TABLE ${name} CASCADE`);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/**
 * Detaches (without blocking other tenants) and drops every partition whose collection is
 * gone. Needs a connection outside any transaction: DETACH ... CONCURRENTLY cannot run in one.
 */
export async function dropOrphanPartitions(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(${CLEANUP_LOCK})`);
    const orphans = await findOrphans(client);
    for (const o of orphans) {
      const name = partitionName(o.collectionId);
      if (o.attached) await client.query(`ALTER TABLE documents DETACH PARTITION ${name} ${o.pending ? 'FINALIZE' : 'CONCURRENTLY'}`);
      await refundAndDrop(client, name);
    }
    return orphans.length;
  } finally {
    const unlocked = await client.query(`SELECT pg_advisory_unlock(${CLEANUP_LOCK})`).then(() => true, () => false);
    client.release(!unlocked); // a connection that may still hold the lock is closed, not reused
  }
}

/**
 * ANALYZEs a collection's partition when PostgreSQL has no statistics for it yet, or they
 * describe less than half of it (more rows changed since than it had then). Returns whether
 * it ran. The owner's connection: ANALYZE needs the table's owner.
 */
export async function analyzeIfStale(db: Kysely<Database>, collectionId: string, minChanged: number): Promise<boolean> {
  const name = partitionName(collectionId);
  const { rows } = await sql<{ stale: boolean }>`
    SELECT c.reltuples < 0 OR coalesce(s.n_mod_since_analyze, 0) > greatest(c.reltuples, ${minChanged}) AS stale
      FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
     WHERE c.oid = to_regclass(${name})`.execute(db);
  if (!rows[0]?.stale) return false;
  await sql.raw(`ANALYZE ${name}`).execute(db);
  return true;
}
