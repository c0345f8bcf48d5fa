/**
 * SQL of scheduled backups, restores and the operations' progress (migrations/072): schedules,
 * the projects' backup keys, stored backups, and project_operations. On the owner connection
 * (ctx.db.admin): the dashboard routes check ownership first (loadMemberProject), and every
 * statement names its project.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { Encrypted } from '../../lib/crypto.js';
import type { Counts } from './archive.js';

type Db = Kysely<Database>;

export const RUN_BACKUP_TASK = 'backups:run';
export const RESTORE_TASK = 'backups:restore';

/** How a schedule was chosen (schedule.ts). */
export type Preset = 'off' | 'daily' | 'weekly' | 'custom';

export interface ScheduleRow {
  preset: Preset;
  cron: string | null;
  keep_daily: number;
  keep_weekly: number;
}

export async function scheduleOf(db: Db, projectId: string): Promise<ScheduleRow | null> {
  const { rows } = await sql<ScheduleRow>`
    SELECT preset, cron, keep_daily, keep_weekly FROM backup_schedules WHERE project_id = ${projectId}`.execute(db);
  return rows[0] ?? null;
}

export async function upsertSchedule(db: Db, projectId: string, s: ScheduleRow, now: Date): Promise<void> {
  await sql`
    INSERT INTO backup_schedules (project_id, preset, cron, keep_daily, keep_weekly, updated_at)
    VALUES (${projectId}, ${s.preset}, ${s.cron}, ${s.keep_daily}, ${s.keep_weekly}, ${now})
    ON CONFLICT (project_id) DO UPDATE SET preset = excluded.preset, cron = excluded.cron,
      keep_daily = excluded.keep_daily, keep_weekly = excluded.keep_weekly, updated_at = excluded.updated_at`.execute(db);
}

/** Every project with its owner's plan and its own schedule (nulls: none, the plan's default). */
export async function allSchedules(db: Db): Promise<Array<{ project_id: string; plan: string } & Partial<ScheduleRow>>> {
  const { rows } = await sql<{ project_id: string; plan: string } & Partial<ScheduleRow>>`
    SELECT p.id AS project_id, o.plan, s.preset, s.cron, s.keep_daily, s.keep_weekly
      FROM projects p JOIN operators o ON o.id = p.owner_id
      LEFT JOIN backup_schedules s ON s.project_id = p.id`.execute(db);
  return rows;
}

/** The project, its owner's plan and its own schedule, for a run. */
export async function projectForBackup(db: Db, projectId: string) {
  const { rows } = await sql<{ id: string; name: string; owner_id: string; plan: string }>`
    SELECT p.id, p.name, p.owner_id, o.plan FROM projects p JOIN operators o ON o.id = p.owner_id WHERE p.id = ${projectId}`.execute(db);
  return rows[0] ?? null;
}

export async function backupKeyOf(db: Db, projectId: string): Promise<Encrypted | null> {
  const { rows } = await sql<{ key: Encrypted }>`SELECT key FROM backup_keys WHERE project_id = ${projectId}`.execute(db);
  return rows[0]?.key ?? null;
}

/** Stores a new project key unless one exists (two first runs at once keep the first). */
export async function insertBackupKey(db: Db, projectId: string, key: Encrypted, now: Date): Promise<void> {
  await sql`INSERT INTO backup_keys (project_id, key, created_at) VALUES (${projectId}, ${JSON.stringify(key)}::jsonb, ${now})
            ON CONFLICT (project_id) DO NOTHING`.execute(db);
}

export interface Due {
  projectId: string;
  backupId: string;
  operationId: string;
}

/**
 * A minute's scheduled backups, in one statement: each project's minute is claimed in
 * graphile-worker's crontab bookkeeping (`_private_known_crontabs`, identifier `bk:<projectId>`,
 * as src/worker/cron.ts and the functions' schedules do), so a second scheduling of the same
 * minute (another worker, a retried job) adds nothing, even after the first run finished. Only
 * claimed minutes get their backup row, their operation and their job. Returns the backups added.
 */
export async function enqueueScheduledBackups(db: Db, at: Date, due: Due[], maxAttempts: number): Promise<string[]> {
  if (due.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    WITH specs AS (
      SELECT j ->> 'projectId' AS project_id, j ->> 'backupId' AS backup_id, j ->> 'operationId' AS operation_id,
             'bk:' || (j ->> 'projectId') AS identifier
        FROM json_array_elements(${JSON.stringify(due)}::json) AS j
    ), locks AS (
      INSERT INTO graphile_worker._private_known_crontabs AS k (identifier, known_since, last_execution)
      SELECT identifier, ${at}::timestamptz, ${at}::timestamptz FROM specs
      ON CONFLICT (identifier) DO UPDATE SET last_execution = excluded.last_execution
       WHERE k.last_execution IS NULL OR k.last_execution < excluded.last_execution
      RETURNING k.identifier
    ), added AS (
      INSERT INTO backups (id, project_id, trigger, scheduled_for, status, max_attempts, created_at)
      SELECT specs.backup_id, specs.project_id, 'schedule', ${at}::timestamptz, 'queued', ${maxAttempts}::int, ${at}::timestamptz
        FROM specs JOIN locks USING (identifier)
      ON CONFLICT (project_id, scheduled_for) DO NOTHING
      RETURNING id, project_id
    ), ops AS (
      INSERT INTO project_operations (id, project_id, kind, status, phase, backup_id, created_at, updated_at)
      SELECT specs.operation_id, added.project_id, 'backup', 'queued', 'queued', added.id, ${at}::timestamptz, ${at}::timestamptz
        FROM added JOIN specs ON specs.backup_id = added.id
      RETURNING backup_id
    )
    SELECT graphile_worker.add_job(${RUN_BACKUP_TASK}, json_build_object('backupId', ops.backup_id), max_attempts => ${maxAttempts}::int,
                                   job_key => 'bk:' || ops.backup_id, job_key_mode => 'unsafe_dedupe'), ops.backup_id AS id
      FROM ops`.execute(db);
  return rows.map((r) => r.id);
}

/** A run asked for now: the backup row, its operation and its job, in one statement. */
export async function enqueueManualBackup(db: Db, projectId: string, backupId: string, operationId: string, now: Date, maxAttempts: number): Promise<void> {
  await sql`
    WITH added AS (
      INSERT INTO backups (id, project_id, trigger, status, max_attempts, created_at)
      VALUES (${backupId}, ${projectId}, 'manual', 'queued', ${maxAttempts}, ${now}) RETURNING id
    ), ops AS (
      INSERT INTO project_operations (id, project_id, kind, status, phase, backup_id, created_at, updated_at)
      SELECT ${operationId}, ${projectId}, 'backup', 'queued', 'queued', id, ${now}::timestamptz, ${now}::timestamptz FROM added
      RETURNING backup_id
    )
    SELECT graphile_worker.add_job(${RUN_BACKUP_TASK}, json_build_object('backupId', backup_id), max_attempts => ${maxAttempts}::int,
                                   job_key => 'bk:' || backup_id, job_key_mode => 'unsafe_dedupe') FROM ops`.execute(db);
}

/** Serialises "run now" of one project (in the caller's transaction). */
export async function lockProjectBackups(db: Db, projectId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('plinth.backups'), hashtext(${projectId}))`.execute(db);
}

export async function hasActiveBackup(db: Db, projectId: string): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM backups WHERE project_id = ${projectId} AND status IN ('queued', 'running', 'retrying')`.execute(db);
  return rows[0]!.n > 0;
}

export interface BackupRow {
  id: string;
  project_id: string;
  trigger: 'schedule' | 'manual';
  scheduled_for: Date | null;
  status: 'queued' | 'running' | 'retrying' | 'succeeded' | 'failed';
  attempts: number;
  max_attempts: number;
  error_code: string | null;
  error_message: string | null;
  provider: 'internal' | 'external' | null;
  object_path: string | null;
  size_bytes: string | null;
  counts: Counts | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export async function backupOf(db: Db, projectId: string, backupId: string): Promise<BackupRow | null> {
  const { rows } = await sql<BackupRow>`SELECT * FROM backups WHERE id = ${backupId} AND project_id = ${projectId}`.execute(db);
  return rows[0] ?? null;
}

/**
 * The backup, locked until the caller's transaction ends: `update` by its deletion (which
 * waits for a restore being queued from it, and makes one queued after it find nothing),
 * `share` by a restore being queued (so the backup cannot be deleted under it).
 */
export async function lockBackup(db: Db, projectId: string, backupId: string, mode: 'update' | 'share'): Promise<BackupRow | null> {
  const { rows } = await sql<BackupRow>`
    SELECT * FROM backups WHERE id = ${backupId} AND project_id = ${projectId} ${mode === 'update' ? sql`FOR UPDATE` : sql`FOR SHARE`}`.execute(db);
  return rows[0] ?? null;
}

/** Whether a restore from this backup is queued or running. */
export async function hasActiveRestore(db: Db, backupId: string): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM project_operations
     WHERE backup_id = ${backupId} AND kind = 'restore' AND status IN ('queued', 'running', 'retrying')`.execute(db);
  return rows[0]!.n > 0;
}

export async function backupById(db: Db, backupId: string): Promise<BackupRow | null> {
  const { rows } = await sql<BackupRow>`SELECT * FROM backups WHERE id = ${backupId}`.execute(db);
  return rows[0] ?? null;
}

export async function listBackups(db: Db, projectId: string, limit: number): Promise<BackupRow[]> {
  const { rows } = await sql<BackupRow>`
    SELECT * FROM backups WHERE project_id = ${projectId} ORDER BY created_at DESC, id DESC LIMIT ${limit}`.execute(db);
  return rows;
}

/** An attempt starts: counted, `running`. Null when the backup is gone or already done. */
export async function startAttempt(db: Db, backupId: string, now: Date): Promise<BackupRow | null> {
  const { rows } = await sql<BackupRow>`
    UPDATE backups SET status = 'running', attempts = attempts + 1, started_at = ${now}, error_code = NULL, error_message = NULL
     WHERE id = ${backupId} AND status IN ('queued', 'running', 'retrying') RETURNING *`.execute(db);
  return rows[0] ?? null;
}

/** The attempt stored its object. False: the row is gone (deleted with its project meanwhile). */
export async function backupSucceeded(db: Db, backupId: string, done: { provider: string; path: string; size: number; counts: Counts; at: Date }): Promise<boolean> {
  const res = await sql`
    UPDATE backups SET status = 'succeeded', provider = ${done.provider}, object_path = ${done.path}, size_bytes = ${done.size},
           counts = ${JSON.stringify(done.counts)}::jsonb, finished_at = ${done.at}
     WHERE id = ${backupId}`.execute(db);
  return Number(res.numAffectedRows ?? 0) > 0;
}

/** A failed attempt: `retrying` while attempts are left, else `failed`. */
export async function backupFailed(db: Db, backupId: string, f: { final: boolean; code: string; message: string; at: Date }): Promise<void> {
  await sql`
    UPDATE backups SET status = ${f.final ? 'failed' : 'retrying'}, error_code = ${f.code}, error_message = ${f.message},
           finished_at = ${f.final ? f.at : null}
     WHERE id = ${backupId}`.execute(db);
}

/** A stored backup: its object at `object_path` on `provider`'s backend. */
export interface StoredBackup {
  id: string;
  created_at: Date;
  provider: 'internal' | 'external';
  object_path: string;
}

/** The project's stored backups, newest first: what retention chooses from. */
export async function succeededBackups(db: Db, projectId: string): Promise<StoredBackup[]> {
  const { rows } = await sql<StoredBackup>`
    SELECT id, created_at, provider, object_path FROM backups
     WHERE project_id = ${projectId} AND status = 'succeeded' ORDER BY created_at DESC, id DESC`.execute(db);
  return rows;
}

export async function deleteBackups(db: Db, projectId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await sql`DELETE FROM backups WHERE project_id = ${projectId} AND id = ANY (${ids}::text[])`.execute(db);
}

/** Failed attempts older than `before` are forgotten (they stay visible until then). */
export async function deleteFailedBefore(db: Db, projectId: string, before: Date): Promise<void> {
  await sql`DELETE FROM backups WHERE project_id = ${projectId} AND status = 'failed' AND created_at < ${before}`.execute(db);
}

// ---------------------------------------------------------------- operations (progress)

export type OperationKind = 'backup' | 'restore' | 'import' | 'export';
export type OperationStatus = 'queued' | 'running' | 'retrying' | 'succeeded' | 'failed';

export interface OperationRow {
  id: string;
  project_id: string;
  kind: OperationKind;
  status: OperationStatus;
  phase: string;
  percent: number;
  backup_id: string | null;
  target_project_id: string | null;
  error_code: string | null;
  error_message: string | null;
  attempts: number;
  detail: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

export async function insertOperation(db: Db, op: { id: string; projectId: string; kind: OperationKind; status: OperationStatus; phase: string; backupId?: string | null; targetProjectId?: string | null; detail?: unknown; now: Date }): Promise<void> {
  await sql`
    INSERT INTO project_operations (id, project_id, kind, status, phase, backup_id, target_project_id, detail, created_at, updated_at)
    VALUES (${op.id}, ${op.projectId}, ${op.kind}, ${op.status}, ${op.phase}, ${op.backupId ?? null}, ${op.targetProjectId ?? null},
            ${op.detail === undefined ? null : JSON.stringify(op.detail)}::jsonb, ${op.now}, ${op.now})`.execute(db);
}

export async function operationProgress(db: Db, id: string, p: { status?: OperationStatus; phase: string; percent: number; attempts?: number; now: Date }): Promise<void> {
  await sql`
    UPDATE project_operations SET status = coalesce(${p.status ?? null}, status), phase = ${p.phase}, percent = ${p.percent},
           attempts = coalesce(${p.attempts ?? null}::int, attempts), updated_at = ${p.now}
     WHERE id = ${id}`.execute(db);
}

export async function operationDone(db: Db, id: string, d: { status: OperationStatus; phase: string; percent: number; code?: string | null; message?: string | null; detail?: unknown; now: Date }): Promise<void> {
  const finished = d.status === 'succeeded' || d.status === 'failed';
  await sql`
    UPDATE project_operations SET status = ${d.status}, phase = ${d.phase}, percent = ${d.percent}, error_code = ${d.code ?? null},
           error_message = ${d.message ?? null}, detail = coalesce(${d.detail === undefined ? null : JSON.stringify(d.detail)}::jsonb, detail),
           updated_at = ${d.now}, finished_at = ${finished ? d.now : null}
     WHERE id = ${id}`.execute(db);
}

export async function operationOfBackup(db: Db, backupId: string): Promise<OperationRow | null> {
  const { rows } = await sql<OperationRow>`SELECT * FROM project_operations WHERE backup_id = ${backupId} AND kind = 'backup' ORDER BY created_at DESC LIMIT 1`.execute(db);
  return rows[0] ?? null;
}

export async function operationById(db: Db, id: string): Promise<OperationRow | null> {
  const { rows } = await sql<OperationRow>`SELECT * FROM project_operations WHERE id = ${id}`.execute(db);
  return rows[0] ?? null;
}

export async function operationOf(db: Db, projectId: string, id: string): Promise<OperationRow | null> {
  const { rows } = await sql<OperationRow>`SELECT * FROM project_operations WHERE id = ${id} AND project_id = ${projectId}`.execute(db);
  return rows[0] ?? null;
}

export async function listOperations(db: Db, projectId: string, activeOnly: boolean, limit: number): Promise<OperationRow[]> {
  const { rows } = await sql<OperationRow>`
    SELECT * FROM project_operations
     WHERE project_id = ${projectId} AND (NOT ${activeOnly} OR status IN ('queued', 'running', 'retrying'))
     ORDER BY created_at DESC, id DESC LIMIT ${limit}`.execute(db);
  return rows;
}

/** A restore's job, with its operation, in one statement. */
export async function enqueueRestore(db: Db, op: { id: string; projectId: string; backupId: string; targetProjectId: string; mode: 'same' | 'new'; now: Date; maxAttempts: number }): Promise<void> {
  await sql`
    WITH ops AS (
      INSERT INTO project_operations (id, project_id, kind, status, phase, backup_id, target_project_id, detail, created_at, updated_at)
      VALUES (${op.id}, ${op.projectId}, 'restore', 'queued', 'queued', ${op.backupId}, ${op.targetProjectId},
              ${JSON.stringify({ into: op.mode })}::jsonb, ${op.now}, ${op.now})
      RETURNING id
    )
    SELECT graphile_worker.add_job(${RESTORE_TASK}, json_build_object('operationId', id), max_attempts => ${op.maxAttempts}::int,
                                   job_key => 'rs:' || id) FROM ops`.execute(db);
}

/** Operations left `running` by a process that died long ago are shown failed. */
export async function failStaleOperations(db: Db, projectId: string, before: Date, now: Date): Promise<void> {
  await sql`
    UPDATE project_operations SET status = 'failed', error_code = 'operation_abandoned',
           error_message = 'The process running it stopped before it finished.', finished_at = ${now}, updated_at = ${now}
     WHERE project_id = ${projectId} AND kind IN ('import', 'export') AND status = 'running' AND updated_at < ${before}`.execute(db);
}

/** What a restore over the project replaces: its current contents, counted. */
export async function projectCounts(db: Db, projectId: string): Promise<{ collections: number; documents: number; users: number; files: number }> {
  const { rows } = await sql<{ collections: number; documents: number; users: number; files: number }>`
    SELECT (SELECT count(*)::int FROM collections WHERE project_id = ${projectId}) AS collections,
           (SELECT count(*)::int FROM documents WHERE project_id = ${projectId}) AS documents,
           (SELECT count(*)::int FROM app_users WHERE project_id = ${projectId}) AS users,
           (SELECT count(*)::int FROM files WHERE project_id = ${projectId} AND status = 'confirmed') AS files`.execute(db);
  return rows[0]!;
}

/** A page of a project's confirmed files on the node's storage (a copy's objects: restore-service.ts). */
export async function internalFilesAfter(db: Db, projectId: string, after: string, limit: number): Promise<Array<{ id: string; path: string }>> {
  const { rows } = await sql<{ id: string; path: string }>`
    SELECT id, path FROM files WHERE project_id = ${projectId} AND status = 'confirmed' AND provider = 'internal' AND id > ${after}
     ORDER BY id LIMIT ${limit}`.execute(db);
  return rows;
}
