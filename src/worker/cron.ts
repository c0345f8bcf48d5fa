/**
 * The crontab (tasks.ts), scheduled by us rather than by graphile-worker's runner. In
 * graphile-worker 0.16 a failed scheduling query (PostgreSQL away at the turn of a minute)
 * rejects a promise nobody can handle: the whole process exits. Here a failure is logged once
 * and retried with backoff, and the minute is not lost: once the database is back, every item
 * due during the outage is scheduled once (its latest due minute), and then every minute again.
 *
 * Scheduling uses graphile-worker's own bookkeeping (`_private_known_crontabs.last_execution`
 * per item, advanced in the statement that adds the job), so each item runs once per minute for
 * the whole cluster however many processes schedule it, graphile-worker-run ones included.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { parseCrontab, type ParsedCronItem } from 'graphile-worker';

export interface Cron {
  /** Schedules what is due now (the minute timer calls it; tests may too). Never rejects. */
  tick(): Promise<void>;
  stop(): Promise<void>;
  /** Whether the last scheduling attempt failed (the database is away): still retrying. */
  failing(): boolean;
}

export interface CronOptions {
  log: Logger;
  /** The time source (ms since the epoch); tests move it to the turn of a minute. */
  now?: () => number;
  /** First retry delay after a failure, doubled up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
}

const MINUTE = 60_000;
/** How far back a long outage is caught up: older due minutes are skipped. */
const CATCH_UP_MS = 24 * 60 * MINUTE;

// graphile-worker's scheduleCronJobs (src/cron.ts, 0.16), for several timestamps at once.
const SCHEDULE_SQL = `
  WITH specs AS (
    SELECT index, (json->>'identifier')::text AS identifier, (json->>'ts')::timestamptz AS ts,
           ((json->'job')->>'task')::text AS task, ((json->'job')->'payload')::json AS payload,
           ((json->'job')->>'queueName')::text AS queue_name, ((json->'job')->>'maxAttempts')::smallint AS max_attempts,
           ((json->'job')->>'priority')::smallint AS priority, ((json->'job')->>'jobKey')::text AS job_key,
           ((json->'job')->>'jobKeyMode')::text AS job_key_mode
      FROM json_array_elements($1::json) WITH ORDINALITY AS entries (json, index)
  ),
  locks AS (
    INSERT INTO graphile_worker._private_known_crontabs AS known_crontabs (identifier, known_since, last_execution)
    SELECT identifier, ts, ts FROM specs
    ON CONFLICT (identifier) DO UPDATE SET last_execution = excluded.last_execution
     WHERE known_crontabs.last_execution IS NULL OR known_crontabs.last_execution < excluded.last_execution
    RETURNING known_crontabs.identifier
  )
  SELECT graphile_worker.add_job(specs.task, specs.payload, specs.queue_name, specs.ts, specs.max_attempts,
                                 specs.job_key, specs.priority, NULL, specs.job_key_mode)
    FROM specs JOIN locks USING (identifier)
   ORDER BY specs.index`;

function digest(ms: number) {
  const d = new Date(ms);
  return { min: d.getUTCMinutes(), hour: d.getUTCHours(), date: d.getUTCDate(), month: d.getUTCMonth() + 1, dow: d.getUTCDay() };
}

/** Each item due in the minutes [from, to] with its latest due minute (an outage runs it once). */
export function dueItems(items: readonly ParsedCronItem[], from: number, to: number): Array<{ item: ParsedCronItem; ts: number }> {
  const latest = new Map<ParsedCronItem, number>();
  for (let t = Math.max(from, to - CATCH_UP_MS); t <= to; t += MINUTE) {
    const d = digest(t);
    for (const item of items) if (item.match(d)) latest.set(item, t);
  }
  return [...latest].map(([item, ts]) => ({ item, ts }));
}

function spec({ item, ts }: { item: ParsedCronItem; ts: number }) {
  const at = new Date(ts).toISOString();
  const o = item.options;
  return {
    identifier: item.identifier,
    ts: at,
    job: {
      task: item.task,
      payload: { ...item.payload, _cron: { ts: at, backfilled: false } },
      queueName: o.queueName,
      maxAttempts: o.maxAttempts,
      priority: o.priority,
      jobKey: o.jobKey,
      jobKeyMode: o.jobKeyMode,
    },
  };
}

export function startCron(pool: pg.Pool, crontab: string, opts: CronOptions): Cron {
  const items = parseCrontab(crontab);
  const now = opts.now ?? Date.now;
  const retryMs = opts.retryMs ?? 1000;
  const maxRetryMs = opts.maxRetryMs ?? 10_000;
  /** The first minute not scheduled yet. */
  let next = Math.floor(now() / MINUTE) * MINUTE + MINUTE;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;

  const arm = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void tick(), Math.max(1, ms));
    timer.unref();
  };

  const once = async () => {
    const current = Math.floor(now() / MINUTE) * MINUTE;
    if (current >= next) {
      const due = dueItems(items, next, current);
      try {
        if (due.length > 0) await pool.query(SCHEDULE_SQL, [JSON.stringify(due.map(spec))]);
      } catch (err) {
        if (failures++ === 0) opts.log.warn({ err, reason: (err as Error).message }, 'crontab: scheduling failed, retrying until the database is back');
        arm(Math.min(maxRetryMs, retryMs * 2 ** (failures - 1)));
        return;
      }
      if (failures > 0) opts.log.info({ failures }, 'crontab: scheduling again');
      failures = 0;
      next = current + MINUTE;
    }
    arm(next - now() + 1); // just past the turn of the minute
  };

  const tick = (): Promise<void> => {
    running ??= once()
      .catch((err) => {
        opts.log.error({ err }, 'crontab: unexpected error'); // never an unhandled rejection
        arm(maxRetryMs);
      })
      .finally(() => (running = null));
    return running;
  };

  arm(next - now() + 1);
  return {
    tick,
    failing: () => failures > 0,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
