/**
 * A task that fails because PostgreSQL went away (isDatabaseUnavailable: a refused or broken
 * connection, the server shutting down) is not handed back to graphile-worker as a failure:
 * that would burn one of its attempts and schedule the retry with exponential backoff (2.7 s,
 * 7.4 s, 20 s…), so a mail hit by a few outages could wait minutes or run out of attempts. The
 * runner keeps the job instead, waits until the database answers, and runs the handler again
 * at once (handlers are idempotent: tasks.ts). After `maxWaitMs`, or once the process is
 * stopping, the error goes to graphile-worker as usual. (Not on the pool's abort signal: a pool
 * replaced after an outage (supervisor.ts) lets its runners finish their jobs.)
 */
import type { Task, TaskList } from 'graphile-worker';
import type pg from 'pg';
import { isDatabaseUnavailable } from '../db/errors.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function databaseAnswers(pool: pg.Pool): Promise<boolean> {
  return pool.query('SELECT 1').then(
    () => true,
    () => false,
  );
}

export function retryThroughOutages(tasks: TaskList, pool: pg.Pool, stopping: () => boolean, maxWaitMs = 5 * 60_000): TaskList {
  const wrap = (task: Task): Task => async (payload, helpers) => {
    const until = Date.now() + maxWaitMs;
    for (;;) {
      try {
        return await task(payload, helpers);
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        while (!(await databaseAnswers(pool))) {
          if (Date.now() > until || stopping()) throw err;
          await sleep(250);
        }
      }
    }
  };
  return Object.fromEntries(Object.entries(tasks).map(([name, task]) => [name, wrap(task as Task)]));
}
