/**
 * The job queue as operators watch it (the /metrics gauges): one scan of graphile-worker's
 * private jobs table (0.16: `graphile_worker.jobs` is a view over it, with joins we don't need),
 * under a short statement timeout so a slow database never holds a scrape.
 */
import type pg from 'pg';
import type { JobQueueStats } from '../lib/metrics.js';

const STATS = `
  SELECT count(*) FILTER (WHERE is_available AND run_at <= now())::int AS ready,
         count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS locked,
         count(*) FILTER (WHERE locked_at IS NULL AND attempts >= max_attempts)::int AS failed,
         coalesce(extract(epoch FROM now() - min(run_at) FILTER (WHERE is_available AND run_at <= now())), 0)::float8 AS oldest
    FROM graphile_worker._private_jobs`;

export async function jobQueueStats(pool: pg.Pool, timeoutMs = 1000): Promise<JobQueueStats> {
  const client = await pool.connect();
  try {
    await client.query(`BEGIN READ ONLY; SET LOCAL statement_timeout = ${Math.trunc(timeoutMs)}`);
    const { rows } = await client.query<{ ready: number; locked: number; failed: number; oldest: number }>(STATS);
    await client.query('COMMIT');
    const row = rows[0]!;
    return { ready: row.ready, locked: row.locked, failed: row.failed, oldestReadyAgeSeconds: row.oldest };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
