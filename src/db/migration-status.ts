/**
 * Migration checksums and drift (migrations/069_migration_checksums.sql). After every run,
 * `migrate()` records the SHA-256 of each applied migration's file once (first seen, never
 * overwritten); `migrationStatus` compares what the database applied and recorded with the files
 * of the running version. Read by `plinth migrate --status` (src/cli/migrate.ts) and the
 * dashboard's Database screen (modules/database-insight), so both say the same.
 *
 * Per migration:
 * - `ok`: applied, and its file's checksum is the one recorded;
 * - `changed` (drift): applied, but its file is no longer what was applied;
 * - `missing` (drift): applied, but this version has no such file (the database was migrated
 *   by a newer version, or the file was removed);
 * - `unknown` (drift): applied, but no checksum was ever recorded for it, so it cannot be
 *   verified (normally only between an upgrade's migration and its sql/ step);
 * - `pending`: a file the database has not applied yet (`plinth migrate` applies it).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** pg.Client and pg.Pool both. */
export interface Queryable {
  query<R extends object>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

export type MigrationState = 'ok' | 'changed' | 'missing' | 'unknown' | 'pending';

export interface MigrationEntry {
  name: string;
  state: MigrationState;
  appliedAt: Date | null;
  /** The checksum recorded when it was applied (hex SHA-256), or null. */
  recordedChecksum: string | null;
  /** The checksum of this version's file, or null when it has none. */
  fileChecksum: string | null;
}

export interface MigrationStatus {
  migrations: MigrationEntry[];
  /** How many migrations are in each state. */
  counts: Record<MigrationState, number>;
  /** No drift (changed, missing, unknown) and nothing pending. */
  inSync: boolean;
  drift: boolean;
}

export const DRIFT_STATES: ReadonlySet<MigrationState> = new Set(['changed', 'missing', 'unknown']);

/** The migration files (name without `.sql`, as node-pg-migrate records it) and their SHA-256. */
export function migrationFiles(dir: string): Map<string, string> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
  return new Map(files.map((f) => [f.slice(0, -'.sql'.length), createHash('sha256').update(readFileSync(path.join(dir, f))).digest('hex')]));
}

/** Records the checksum of every applied migration that has none yet (first seen wins). */
export async function recordChecksums(db: Queryable, dir: string): Promise<void> {
  const files = migrationFiles(dir);
  await db.query(
    `INSERT INTO plinth_migration_checksums (name, checksum)
     SELECT u.name, u.checksum FROM unnest($1::text[], $2::text[]) AS u (name, checksum)
      WHERE EXISTS (SELECT 1 FROM pgmigrations m WHERE m.name = u.name)
     ON CONFLICT (name) DO NOTHING`,
    [[...files.keys()], [...files.values()]],
  );
}

export async function migrationStatus(db: Queryable, dir: string): Promise<MigrationStatus> {
  const files = migrationFiles(dir);
  const { rows: tables } = await db.query<{ applied: boolean; recorded: boolean }>(
    `SELECT to_regclass('pgmigrations') IS NOT NULL AS applied, to_regclass('plinth_migration_checksums') IS NOT NULL AS recorded`,
  );
  const applied = tables[0]?.applied
    ? (await db.query<{ name: string; run_on: Date }>('SELECT name, run_on FROM pgmigrations ORDER BY run_on, id')).rows
    : [];
  const recorded = new Map(
    tables[0]?.recorded
      ? (await db.query<{ name: string; checksum: string }>('SELECT name, checksum FROM plinth_migration_checksums')).rows.map((r) => [r.name, r.checksum])
      : [],
  );
  const migrations: MigrationEntry[] = applied.map((m) => {
    const fileChecksum = files.get(m.name) ?? null;
    const recordedChecksum = recorded.get(m.name) ?? null;
    const state: MigrationState = fileChecksum === null ? 'missing' : recordedChecksum === null ? 'unknown' : recordedChecksum === fileChecksum ? 'ok' : 'changed';
    return { name: m.name, state, appliedAt: m.run_on, recordedChecksum, fileChecksum };
  });
  const seen = new Set(applied.map((m) => m.name));
  for (const [name, fileChecksum] of files) {
    if (!seen.has(name)) migrations.push({ name, state: 'pending', appliedAt: null, recordedChecksum: null, fileChecksum });
  }
  const counts: Record<MigrationState, number> = { ok: 0, changed: 0, missing: 0, unknown: 0, pending: 0 };
  for (const m of migrations) counts[m.state]++;
  const drift = migrations.some((m) => DRIFT_STATES.has(m.state));
  return { migrations, counts, drift, inSync: !drift && counts.pending === 0 };
}
