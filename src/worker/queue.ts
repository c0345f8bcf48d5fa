/**
 * Enqueueing jobs for graphile-worker (which runs inside the same database). `addJob` takes
 * an optional transaction so a job is enqueued atomically with the rows it is about.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';

export interface JobSpec {
  runAt?: Date;
  maxAttempts?: number;
  jobKey?: string;
  queueName?: string;
}

export interface JobQueue {
  add(task: string, payload: unknown, spec?: JobSpec, tx?: Kysely<Database>): Promise<string>;
}

export function createJobQueue(db: Kysely<Database>): JobQueue {
  return {
    async add(task, payload, spec = {}, tx) {
      const { rows } = await sql<{ id: string }>`
        SELECT (graphile_worker.add_job(
          ${task}, ${JSON.stringify(payload)}::json,
          queue_name => ${spec.queueName ?? null}::text,
          run_at => ${spec.runAt ?? null}::timestamptz,
          max_attempts => ${spec.maxAttempts ?? null}::int,
          job_key => ${spec.jobKey ?? null}::text
        )).id::text AS id`.execute(tx ?? db);
      return rows[0]!.id;
    },
  };
}
