/**
 * Schema management: graphile-worker's own schema, our plain-SQL migrations from migrations/
 * (node-pg-migrate), then the idempotent policy and function files from sql/ (re-applied on
 * every start, so sql/ is the source of truth a DBA reads). All three run under one blocking
 * advisory lock, so API nodes and workers starting at once apply them exactly once, one after
 * another (graphile-worker's `CREATE SCHEMA` run by two processes at once fails with
 * `duplicate key … pg_namespace_nspname_index`). Each applied migration's checksum is recorded
 * once (migration-status.ts), so a file changed after it was applied shows as drift.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { runMigrations as runWorkerMigrations } from 'graphile-worker';
import { runner } from 'node-pg-migrate';

import { ROOT_DIR } from '../paths.js';
import { recordChecksums } from './migration-status.js';

export const MIGRATIONS_DIR = path.join(ROOT_DIR, 'migrations');
export const SQL_DIR = path.join(ROOT_DIR, 'sql');
const LOCK_ID = 0x706c696e7468; // "plinth"

/** A start-up problem confined to one collection (ids and names only: never rule text, SQL or secrets). */
export type MigrateWarn = (detail: Record<string, unknown>, message: string) => void;

/**
 * `upTo` (tests of a migration's data conversion): apply only the first N pending migrations,
 * and not sql/ (whose files match the latest schema). `warn`: a collection whose policies the
 * start-up sync could not rebuild as its rules say (marked broken, fail closed).
 */
export async function migrate(databaseUrl: string, log: (msg: string) => void = () => {}, upTo?: number, warn: MigrateWarn = () => {}): Promise<void> {
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
      // The files as applied, for drift checks (`plinth migrate --status`; first seen wins).
      await recordChecksums(client, MIGRATIONS_DIR);
      await applySqlDir(client);
      await syncPartitionPolicies(client, warn);
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

interface Candidate {
  id: string;
  project_id: string;
  name: string;
}

/**
 * Brings collection partitions' policies (sql/20_documents_policies.sql) in line at start-up,
 * each collection on its own, so one project's rules never stop the server (issue 46):
 *
 * - partitions made before those policies existed (the first start after an upgrade), or granted
 *   before migrations/040 (to plinth_api, which would give the publishable role the hidden
 *   fields' columns): rebuilt;
 * - rules whose compiled SQL reads a partition no longer there (a looked-up collection deleted
 *   by a version that dropped its partition CASCADE, which took those policies with it):
 *   rebuilding them would fail, so their actions are marked broken and deny everything
 *   (plinth_break_stale_rules; docs/rules.md, "When a looked-up collection goes");
 * - a rebuild that fails for any other reason: every rule of the collection marked broken
 *   (deny), else the partition is left as it was (the missing policies deny), and a warning.
 *
 * A batch per transaction (each partition takes a lock, and one transaction over thousands could
 * run out of lock slots), a savepoint per collection; each collection is visited once.
 */
async function syncPartitionPolicies(client: pg.Client, warn: MigrateWarn): Promise<void> {
  const seen: string[] = [];
  for (;;) {
    const { rows } = await client.query<Candidate>(
      `SELECT c.id, c.project_id, c.name FROM collections c
        WHERE to_regclass('documents_' || c.id) IS NOT NULL AND c.id <> ALL($1::text[])
          AND (NOT EXISTS (SELECT 1 FROM pg_policies p WHERE p.tablename = 'documents_' || c.id AND p.policyname = 'documents_read')
               OR has_table_privilege('plinth_api', 'documents_' || c.id, 'SELECT')
               OR c.rules_sql IS NOT NULL AND cardinality(plinth_stale_rule_actions(c.rules_sql)) > 0)
        ORDER BY c.id LIMIT ${POLICIES_BATCH}`,
      [seen],
    );
    if (!rows.length) return;
    await client.query('BEGIN');
    try {
      for (const c of rows) {
        seen.push(c.id);
        await syncOne(client, c, warn);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
  }
}

async function syncOne(client: pg.Client, c: Candidate, warn: MigrateWarn): Promise<void> {
  const detail = { projectId: c.project_id, collectionId: c.id, collection: c.name };
  const attempt = async (fn: () => Promise<void>): Promise<unknown> => {
    await client.query('SAVEPOINT plinth_sync_one');
    try {
      await fn();
      await client.query('RELEASE SAVEPOINT plinth_sync_one');
      return null;
    } catch (err) {
      await client.query('ROLLBACK TO SAVEPOINT plinth_sync_one');
      return err ?? new Error('failed');
    }
  };
  const failed = await attempt(async () => {
    // Marking fires the collections trigger, which rebuilds the partition's policies.
    const { rows } = await client.query<{ marked: string[] }>('SELECT plinth_break_stale_rules($1) AS marked', [c.id]);
    const marked = rows[0]?.marked ?? [];
    if (marked.length) warn({ ...detail, actions: marked }, 'access rules look up a collection that no longer exists: marked broken, they deny everything until saved again');
    else await client.query('SELECT plinth_sync_partition_policies($1)', [c.id]);
  });
  if (!failed) return;
  const cause = { code: (failed as { code?: string }).code, error: String((failed as Error).message ?? failed).slice(0, 200) };
  let marked: string[] = [];
  const still = await attempt(async () => {
    const reason = `Its policy could not be built at start-up (SQLSTATE ${cause.code ?? 'unknown'}): this rule denies everything until the rules are saved again.`;
    const { rows } = await client.query<{ marked: string[] }>(
      `SELECT plinth_mark_rules_broken($1, ARRAY['list', 'view', 'create', 'update', 'delete'], $2) AS marked`,
      [c.id, reason],
    );
    marked = rows[0]?.marked ?? [];
    await client.query('SELECT plinth_sync_partition_policies($1)', [c.id]);
  });
  if (!still && marked.length) warn({ ...detail, ...cause, actions: marked }, 'partition policies could not be rebuilt: its access rules are marked broken and deny everything until saved again');
  else warn({ ...detail, ...cause }, 'partition policies could not be rebuilt: left as they were (the missing ones deny)');
}
