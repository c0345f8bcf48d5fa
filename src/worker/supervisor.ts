/**
 * Keeps the job runners running through database outages. graphile-worker 0.16 never replaces a
 * runner (one of the `concurrency` workers of a pool) that stopped: one that finished a job while
 * PostgreSQL was away cannot record it ("Failed to release job … committing seppuku"), exits,
 * and keeps that job locked, under its id, for graphile-worker's 4 hours. After a few outages
 * no runner is left and the process, still up, delivers nothing.
 *
 * So the runners live in a pool we watch. When one stops unexpectedly, a fresh pool of the full
 * concurrency is started (after a short backoff when it happens again and again) and the old one
 * is shut down gracefully (its other runners finish their jobs first). The ids of stopped runners
 * are kept in the heartbeat row (heartbeat.ts) until their jobs are force-unlocked, which is
 * retried every second until the database answers: the job is not running (its handler has
 * returned), so the next poll runs it again at once. Task handlers are idempotent anyway.
 */
import { EventEmitter } from 'node:events';
import { Logger as GwLogger, runTaskList, type TaskList, type WorkerEvents, type WorkerPool } from 'graphile-worker';
import type pg from 'pg';
import type { Logger } from 'pino';
import { databaseAnswers, retryThroughOutages } from './outage-retry.js';

export interface RunnerState {
  /** Runners taking jobs now (the current pool's), of `concurrency`. */
  runners: number;
  concurrency: number;
  /** Pools started to replace runners that stopped (since the process started). */
  restarts: number;
  /** Ids of stopped runners whose jobs are not unlocked yet (the database is away). */
  orphans: number;
  /** The last poll for jobs failed: the database is away for this process. */
  databaseDown: boolean;
}

export interface Supervisor {
  state(): RunnerState;
  /** Every runner id this process answers for: live ones and stopped ones with locked jobs. */
  workerIds(): string[];
  /** Unlocks the stopped runners' jobs now (the timer does it every second while there are any). */
  unlockOrphans(): Promise<void>;
  stop(): Promise<void>;
}

export interface SupervisorOptions {
  tasks: TaskList;
  concurrency: number;
  pollInterval: number;
  log: Logger;
  /** Called when the set of runner ids changes (the heartbeat row is refreshed). */
  onIdsChanged: () => void;
  /** First delay before a repeated restart, doubled up to 5 s; reset after a minute without one. */
  restartBackoffMs?: number;
}

const MAX_BACKOFF_MS = 5000;
const CALM_MS = 60_000;

export function startSupervisor(pool: pg.Pool, opts: SupervisorOptions): Supervisor {
  const live = new Set<string>();
  const orphans = new Set<string>();
  let current: WorkerPool;
  let restarts = 0;
  let recent = 0; // restarts in a row, for the backoff
  let lastRestart = 0;
  let restarting = false;
  let databaseDown = false;
  let stopping = false;
  /** Replaced pools whose runners are finishing their jobs. */
  const draining = new Set<Promise<void>>();
  const log = opts.log;
  const tasks = retryThroughOutages(opts.tasks, pool, () => stopping);

  const unlock = unlocker(pool, orphans, log, opts.onIdsChanged);
  const unlockTimer = setInterval(() => void (orphans.size > 0 && unlock()), 1000);
  unlockTimer.unref();

  const launch = (): WorkerPool => {
    const events = new EventEmitter() as WorkerEvents;
    events.on('worker:create', ({ worker }) => {
      live.add(worker.workerId);
      opts.onIdsChanged();
    });
    events.on('worker:getJob:error', ({ worker, error }) => {
      databaseDown = true;
      if (worker.workerPool === current && !stopping) replace('outage', null, error);
    });
    events.on('worker:getJob:empty', () => (databaseDown = false));
    events.on('job:start', () => (databaseDown = false));
    events.on('worker:stop', ({ worker, error }) => {
      live.delete(worker.workerId);
      // A stopped runner runs nothing: whatever its id still locks is orphaned.
      orphans.add(worker.workerId);
      opts.onIdsChanged();
      if (worker.workerPool === current && !stopping) replace('lost', worker.workerId, error);
    });
    const self = runTaskList(
      { concurrency: opts.concurrency, pollInterval: opts.pollInterval, noHandleSignals: true, logger: workerLogger(log), events },
      tasks,
      pool,
    );
    // A pool only ends when shut down; one that ends by itself (e.g. graphile-worker saw a
    // breaking migration) is replaced like a lost runner.
    void self.promise.then(() => self === current && !stopping && replace('lost', null, undefined));
    return self;
  };

  /**
   * Starts a fresh pool once the database answers, and retires the current one. `lost`: a
   * runner stopped (backoff when it keeps happening). `outage`: a poll failed, so a lock may
   * have been taken whose reply never arrived (the runner does not know it holds that job),
   * and graphile-worker 0.16 may have cached the failure of the pool's task lookup, failing
   * every later poll with it. Replacing the pool fixes both: its runners stop, their ids'
   * locks are released, and the new pool looks its tasks up again.
   */
  const replace = (kind: 'lost' | 'outage', workerId: string | null, error: unknown) => {
    if (restarting) return; // a replacement is on its way
    restarting = true;
    const reason = error instanceof Error ? error.message : error === undefined ? 'stopped' : String(error);
    if (Date.now() - lastRestart > CALM_MS) recent = 0;
    const delay = kind === 'outage' || recent === 0 ? 0 : Math.min(MAX_BACKOFF_MS, (opts.restartBackoffMs ?? 250) * 2 ** (recent - 1));
    if (kind === 'lost') log.warn({ workerId, reason, delayMs: delay }, 'job runner stopped: a fresh set of runners starts once the database answers');
    else log.info({ reason }, 'job runners lost the database while polling: a fresh set starts once it answers');
    void (async () => {
      await sleep(delay);
      // A pool started during the outage would be stuck (above): wait for the database.
      while (!stopping && !(await databaseAnswers(pool))) await sleep(250);
      restarting = false;
      if (stopping) return;
      if (kind === 'lost') recent++;
      restarts++;
      lastRestart = Date.now();
      const old = current;
      current = launch();
      const retiring = retire(old, log);
      draining.add(retiring);
      await retiring;
      draining.delete(retiring);
      await unlock();
    })();
  };

  current = launch();
  return {
    state: () => ({
      runners: current._workers.length,
      concurrency: opts.concurrency,
      restarts,
      orphans: orphans.size,
      databaseDown,
    }),
    workerIds: () => [...live, ...orphans],
    unlockOrphans: unlock,
    async stop() {
      stopping = true;
      clearInterval(unlockTimer);
      await Promise.all([retire(current, log), ...draining]);
      if (orphans.size > 0) await unlock();
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Lets the pool's runners finish their jobs, then ends it; never rejects. */
async function retire(wp: WorkerPool, log: Logger): Promise<void> {
  if (wp._shuttingDown || !wp._active) return;
  await wp.gracefulShutdown('replaced').catch((err) => log.warn({ err }, 'job runners: shutdown of the replaced pool failed'));
}

/** One unlock at a time; ids leave `orphans` only once the database has unlocked their jobs. */
function unlocker(pool: pg.Pool, orphans: Set<string>, log: Logger, changed: () => void): () => Promise<void> {
  let running: Promise<void> | null = null;
  const once = async () => {
    const ids = [...orphans];
    if (ids.length === 0) return;
    try {
      const { rows } = await pool.query<{ n: number }>(
        `WITH held AS (SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE locked_by = ANY($1::text[]))
         SELECT n, graphile_worker.force_unlock_workers($1::text[]) FROM held`,
        [ids],
      );
      for (const id of ids) orphans.delete(id);
      changed();
      if (rows[0]!.n > 0) log.warn({ jobs: rows[0]!.n, runners: ids.length }, 'jobs of stopped job runners released: they run again now');
    } catch {
      // the database is still away: the timer tries again
    }
  };
  return () => (running ??= once().finally(() => (running = null)));
}

function workerLogger(log: Logger): GwLogger {
  return new GwLogger(() => (level, message, meta) => {
    if (level === 'error') log.error(meta ?? {}, message);
    else if (level === 'warning') log.warn(meta ?? {}, message);
    else log.debug(meta ?? {}, message);
  });
}
