/**
 * Schema management: graphile-worker's own schema, our plain-SQL migrations from migrations/
 * (node-pg-migrate), then the idempotent policy and function files from sql/ (re-applied on
 * every start, so sql/ is the source of truth a DBA reads). All three run under one blocking
 * advisory lock, so API nodes and workers starting at once apply them exactly once, one after
 * another (graphile-worker's `CREATE SCHEMA` run by two processes at once fails with
 * `duplicate key … pg_namespace_nspname_index`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { runMigrations as runWorkerMigrations } from 'graphile-worker';
import { runner } from 'node-pg-migrate';

import { ROOT_DIR } from '../paths.js';

export const MIGRATIONS_DIR = path.join(ROOT_DIR, 'migrations');
export const SQL_DIR = path.join(ROOT_DIR, 'sql');
const LOCK_ID = 0x706c696e7468; // "plinth"

/**
 * `upTo` (tests of a migration's data conversion): apply only the first N pending migrations,
 * and not sql/ (whose files match the latest schema).
 */
export async function migrate(databaseUrl: string, log: (msg: string) => void = () => {}, upTo?: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_ID]);
    // On its own connections; the lock held by this session keeps other migrators waiting.
    await runWorkerMigrations({ connectionString: databaseUrl, logger: undefined });
    await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      direction: 'up',
      ...(upTo === undefined ? {} : { count: upTo }),
      migrationsTable: 'pgmigrations',
      noLock: true,
      checkOrder: true,
      singleTransaction: true,
      log: () => {},
      logger: { debug: () => {}, info: log, warn: log, error: log },
    });
    if (upTo === undefined) {
      await applySqlDir(client);
      await syncMissingPartitionPolicies(client);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_ID]).catch(() => {});
    await client.end();
  }
}

/** Applies sql/*.sql in name order inside one transaction. Each file must be idempotent. */
async function applySqlDir(client: pg.Client): Promise<void> {
  const files = readdirSync(SQL_DIR).filter((f) => f.endsWith('.sql')).sort();
  await client.query('BEGIN');
  try {
    for (const file of files) await client.query(readFileSync(path.join(SQL_DIR, file), 'utf8'));
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}

const POLICIES_BATCH = 200;

/**
 * Gives their read policies (sql/20_documents_policies.sql) to collection partitions made before
 * those existed: the first start after an upgrade. A batch per transaction: each partition takes
 * a lock, and one transaction over thousands could run out of lock slots.
 */
async function syncMissingPartitionPolicies(client: pg.Client): Promise<void> {
  for (;;) {
    await client.query('BEGIN');
    try {
      const { rowCount } = await client.query(`
        SELECT plinth_sync_partition_policies(c.id) FROM collections c
        WHERE to_regclass('documents_' || c.id) IS NOT NULL
          AND (NOT EXISTS (SELECT 1 FROM pg_policies p WHERE p.tablename = 'documents_' || c.id AND p.policyname = 'documents_read')
               -- granted before migrations/040: to plinth_api, which would give the publishable
               -- role the hidden fields' columns
               OR has_table_privilege('plinth_api', 'documents_' || c.id, 'SELECT'))
        LIMIT ${POLICIES_BATCH}`);
      await client.query('COMMIT');
      if (!rowCount) return;
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
  }
}
