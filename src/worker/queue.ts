/**
 * Enqueueing jobs for graphile-worker (which runs inside the same database). `add` takes an
 * optional transaction (a tenant one too: see sql/30_worker_grants.sql) so a job is enqueued
 * atomically with the rows it is about.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';

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
        SELECT plinth_add_job(
          ${task}, ${JSON.stringify(payload)}::json, ${spec.queueName ?? null}::text,
          ${spec.runAt ?? null}::timestamptz, ${spec.maxAttempts ?? null}::int, ${spec.jobKey ?? null}::text
        ) AS id`.execute(tx ?? db);
      return rows[0]!.id;
    },
  };
}
