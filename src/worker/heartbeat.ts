/**
 * Taking over the jobs of a worker process that died. graphile-worker frees the jobs locked by
 * a worker that vanished without releasing them (SIGKILL, out of memory, a lost machine) only
 * after a fixed 4 hours: queued mail would wait that long. So every worker process keeps a row
 * in `worker_heartbeats` (migrations/020) with its graphile-worker ids, refreshed every sixth
 * of `deadAfterMs`; and on the same tick every worker process deletes the rows not refreshed
 * for `deadAfterMs` and force-unlocks their ids' jobs (graphile_worker.force_unlock_workers),
 * which the next poll of any worker then runs. A job is taken over within about
 * `deadAfterMs` + one tick + one poll.
 *
 * A process sweeps only after its own heartbeat has succeeded for a whole `deadAfterMs`: after
 * a database outage every row is stale, and the live workers must have had the chance to
 * refresh theirs before anyone calls them dead. Task handlers must be idempotent anyway (a
 * worker stalled beyond `deadAfterMs` may finish a job another one took over); mail is, by
 * its Idempotency-Key.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';

export interface Heartbeat {
  readonly processId: string;
  /** One heartbeat and, when due, one sweep (the timer calls it; tests may too). */
  tick(): Promise<void>;
  /** Stops the timer and removes this process's row (its workers released their jobs). */
  stop(): Promise<void>;
}

export interface HeartbeatOptions {
  deadAfterMs: number;
  /** The graphile-worker ids of this process's workers, as they are now. */
  workerIds: () => string[];
  log: Logger;
}

const BEAT_SQL = `
  INSERT INTO worker_heartbeats (process_id, worker_ids) VALUES ($1, $2)
  ON CONFLICT (process_id) DO UPDATE SET worker_ids = excluded.worker_ids, last_seen = now()`;

const DEAD_SQL = `
  DELETE FROM worker_heartbeats WHERE last_seen < now() - $1 * interval '1 millisecond'
  RETURNING process_id, worker_ids, last_seen`;

/** Deletes the stale rows and unlocks their workers' jobs, in one transaction: one sweeper wins each row. */
async function sweep(pool: pg.Pool, deadAfterMs: number, log: Logger): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const dead = await client.query<{ process_id: string; worker_ids: string[]; last_seen: Date }>(DEAD_SQL, [deadAfterMs]);
    const ids = dead.rows.flatMap((r) => r.worker_ids);
    if (ids.length > 0) {
      const jobs = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE locked_by = ANY($1)', [ids]);
      await client.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [ids]);
      for (const r of dead.rows) log.warn({ deadProcess: r.process_id, lastSeen: r.last_seen }, 'worker process missed its heartbeat: its jobs are released to the other workers');
      if (jobs.rows[0]!.n > 0) log.warn({ jobs: jobs.rows[0]!.n }, 'jobs of dead workers released');
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

export function startHeartbeat(pool: pg.Pool, opts: HeartbeatOptions): Heartbeat {
  const processId = randomUUID();
  const intervalMs = Math.max(100, Math.floor(opts.deadAfterMs / 6));
  let healthySince: number | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;

  const once = async () => {
    try {
      await pool.query(BEAT_SQL, [processId, opts.workerIds()]);
      healthySince ??= Date.now();
    } catch {
      healthySince = null; // the database is away: logged by the pool; try again next tick
      return;
    }
    if (Date.now() - healthySince < opts.deadAfterMs) return;
    await sweep(pool, opts.deadAfterMs, opts.log).catch((err) => opts.log.warn({ err }, 'worker heartbeat sweep failed'));
  };
  // Ticks never overlap; one asked for during a tick runs right after it (new worker ids).
  let again = false;
  const tick = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await once();
      } while (again && !stopped);
    })().finally(() => (running = null));
    return running;
  };
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();

  return {
    processId,
    tick,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await running;
      await pool.query('DELETE FROM worker_heartbeats WHERE process_id = $1', [processId]).catch(() => {});
    },
  };
}
