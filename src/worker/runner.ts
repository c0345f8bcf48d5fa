/** Runs graphile-worker against the same database: in the API process, or as `plinth worker`. */
import { EventEmitter } from 'node:events';
import { Logger as GwLogger, run, type Runner, type WorkerEvents } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { startHeartbeat, type Heartbeat } from './heartbeat.js';
import { buildTaskList, CRONTAB } from './tasks.js';

export interface WorkerRunner extends Runner {
  heartbeat: Heartbeat;
}

export async function startWorker(ctx: AppContext, opts: { pollInterval?: number } = {}): Promise<WorkerRunner> {
  // The heartbeat row (heartbeat.ts) lists this process's worker ids, so that another process
  // can release their jobs if this one dies; each new worker refreshes it at once.
  const workerIds = new Set<string>();
  const heartbeat = startHeartbeat(ctx.db.pool, {
    deadAfterMs: ctx.config.workerDeadAfterMs,
    workerIds: () => [...workerIds],
    log: ctx.log.child({ component: 'worker' }),
  });
  const events = new EventEmitter() as WorkerEvents;
  events.on('worker:create', ({ worker }) => {
    workerIds.add(worker.workerId);
    void heartbeat.tick();
  });
  const runner = await run({
    pgPool: ctx.db.pool,
    taskList: buildTaskList(ctx),
    crontab: CRONTAB,
    concurrency: ctx.config.workerConcurrency,
    noHandleSignals: true,
    pollInterval: opts.pollInterval ?? 1000,
    logger: workerLogger(ctx),
    events,
  });
  return {
    ...runner,
    heartbeat,
    async stop() {
      await runner.stop();
      await heartbeat.stop();
    },
  };
}

function workerLogger(ctx: AppContext): GwLogger {
  const log = ctx.log.child({ component: 'worker' });
  return new GwLogger(() => (level, message, meta) => {
    if (level === 'error') log.error(meta ?? {}, message);
    else if (level === 'warning') log.warn(meta ?? {}, message);
    else log.debug(meta ?? {}, message);
  });
}
