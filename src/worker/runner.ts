/**
 * Runs the job worker against the same database: in the API process, or as `plinth worker`.
 * Three parts, each surviving database outages on its own: the runners (supervisor.ts, which
 * replaces runners that stopped), the crontab (cron.ts) and the heartbeat (heartbeat.ts).
 */
import type { AppContext } from '../context.js';
import { startCron, type Cron } from './cron.js';
import { startHeartbeat, type Heartbeat } from './heartbeat.js';
import { startSupervisor, type RunnerState } from './supervisor.js';
import { buildTaskList, CRONTAB } from './tasks.js';

export interface WorkerHealth extends RunnerState {
  /** Able to run jobs now: every runner up, the database answering, nothing left to unlock. */
  ok: boolean;
  /** Why not, when not ok: `database_unreachable` or `runners_down`. */
  reason?: 'database_unreachable' | 'runners_down';
}

export interface WorkerRunner {
  heartbeat: Heartbeat;
  cron: Cron;
  health(): WorkerHealth;
  stop(): Promise<void>;
}

export async function startWorker(ctx: AppContext, opts: { pollInterval?: number } = {}): Promise<WorkerRunner> {
  const log = ctx.log.child({ component: 'worker' });
  // The heartbeat row lists this process's runner ids, so that another process can release
  // their jobs if this one dies; it is refreshed at once whenever they change.
  let workerIds = (): string[] => [];
  const heartbeat = startHeartbeat(ctx.db.pool, { deadAfterMs: ctx.config.workerDeadAfterMs, workerIds: () => workerIds(), log });
  const supervisor = startSupervisor(ctx.db.pool, {
    tasks: buildTaskList(ctx),
    concurrency: ctx.config.workerConcurrency,
    pollInterval: opts.pollInterval ?? 1000,
    log,
    onIdsChanged: () => void heartbeat.tick(),
  });
  workerIds = supervisor.workerIds;
  void heartbeat.tick();
  const cron = startCron(ctx.db.pool, CRONTAB, { log });
  const health = (): WorkerHealth => {
    const s = supervisor.state();
    if (!ctx.db.reachable || s.databaseDown || cron.failing()) return { ...s, ok: false, reason: 'database_unreachable' };
    if (s.runners < s.concurrency || s.orphans > 0) return { ...s, ok: false, reason: 'runners_down' };
    return { ...s, ok: true };
  };
  ctx.metrics.watchWorker(health);
  return {
    heartbeat,
    cron,
    health,
    async stop() {
      await cron.stop();
      await supervisor.stop();
      await heartbeat.stop();
    },
  };
}
