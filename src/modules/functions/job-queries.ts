/**
 * The job that runs an after-hook or a schedule (hook-jobs.ts, auth-hooks.ts, schedules.ts):
 * its name, its attempts, its payload, adding many at once, and the functions to enqueue for.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { FunctionKind } from './tables.js';

export const RUN_TASK = 'functions.run';
/** Attempts of one event: the first and four retries, after about 3 s, 7 s, 20 s and 55 s. */
export const MAX_ATTEMPTS = 5;

export interface RunJob {
  projectId: string;
  functionId: string;
  kind: Extract<FunctionKind, 'after' | 'schedule'>;
  /** For the invocation log: 'after.create', 'after.sign-up', 'schedule'. */
  trigger: string;
  event: Record<string, unknown> & { id: string };
}

export interface JobOf {
  key: string;
  job: RunJob;
}

/**
 * Enqueues jobs in one statement on the owner's connection (the dispatcher's and the
 * schedules' transactions): `unsafe_dedupe` keeps a job of the same key that exists, running
 * or not, instead of replacing it or adding a second.
 */
export async function enqueueRuns(db: Kysely<Database>, jobs: JobOf[]): Promise<void> {
  if (jobs.length === 0) return;
  await sql`
    SELECT graphile_worker.add_job(${RUN_TASK}, j -> 'job', max_attempts => ${MAX_ATTEMPTS}::int,
                                   job_key => j ->> 'key', job_key_mode => 'unsafe_dedupe')
      FROM json_array_elements(${JSON.stringify(jobs)}::json) AS j`.execute(db);
}

/**
 * A minute's schedule runs: like enqueueRuns, and each function's minute is recorded in
 * graphile-worker's own crontab bookkeeping (`_private_known_crontabs`, identifier
 * `fn:<functionId>`, as src/worker/cron.ts does for the crontab) in the same statement, so a
 * minute already scheduled adds nothing, even once its job has run and is gone.
 */
export async function enqueueScheduledRuns(db: Kysely<Database>, at: Date, jobs: JobOf[]): Promise<void> {
  if (jobs.length === 0) return;
  await sql`
    WITH specs AS (
      SELECT j -> 'job' AS job, j ->> 'key' AS key, 'fn:' || (j -> 'job' ->> 'functionId') AS identifier
        FROM json_array_elements(${JSON.stringify(jobs)}::json) AS j
    ), locks AS (
      INSERT INTO graphile_worker._private_known_crontabs AS k (identifier, known_since, last_execution)
      SELECT identifier, ${at}::timestamptz, ${at}::timestamptz FROM specs
      ON CONFLICT (identifier) DO UPDATE SET last_execution = excluded.last_execution
       WHERE k.last_execution IS NULL OR k.last_execution < excluded.last_execution
      RETURNING k.identifier
    )
    SELECT graphile_worker.add_job(${RUN_TASK}, specs.job, max_attempts => ${MAX_ATTEMPTS}::int,
                                   job_key => specs.key, job_key_mode => 'unsafe_dedupe')
      FROM specs JOIN locks USING (identifier)`.execute(db);
}

/** A deleted schedule's minute bookkeeping (enqueueScheduledRuns), in the deletion's transaction. */
export async function forgetSchedule(db: Kysely<Database>, functionId: string): Promise<void> {
  await sql`DELETE FROM graphile_worker._private_known_crontabs WHERE identifier = ${`fn:${functionId}`}`.execute(db);
}

export interface AfterHookRow {
  id: string;
  project_id: string;
  trigger: { collection?: string; events?: string[] };
  created_at: Date;
}

/** The enabled after-hooks on collections of these projects. */
export async function collectionHooks(db: Kysely<Database>, projectIds: string[]): Promise<AfterHookRow[]> {
  const { rows } = await sql<AfterHookRow>`
    SELECT id, project_id, trigger, created_at FROM functions
     WHERE project_id = ANY (${projectIds}::text[]) AND kind = 'after' AND enabled AND trigger ? 'collection'`.execute(db);
  return rows;
}

/** Every enabled schedule of every project. */
export async function enabledSchedules(db: Kysely<Database>): Promise<Array<{ id: string; project_id: string; cron: string | null }>> {
  const { rows } = await sql<{ id: string; project_id: string; cron: string | null }>`
    SELECT id, project_id, trigger ->> 'cron' AS cron FROM functions
     WHERE kind = 'schedule' AND enabled`.execute(db);
  return rows;
}
