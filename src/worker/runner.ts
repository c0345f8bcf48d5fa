/** Runs graphile-worker against the same database: in the API process, or as `plinth worker`. */
import { Logger as GwLogger, run, type Runner } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { buildTaskList } from './tasks.js';

export async function startWorker(ctx: AppContext, opts: { pollInterval?: number } = {}): Promise<Runner> {
  return run({
    pgPool: ctx.db.pool,
    taskList: buildTaskList(ctx),
    concurrency: ctx.config.workerConcurrency,
    noHandleSignals: true,
    pollInterval: opts.pollInterval ?? 1000,
    logger: workerLogger(ctx),
  });
}

function workerLogger(ctx: AppContext): GwLogger {
  const log = ctx.log.child({ component: 'worker' });
  return new GwLogger(() => (level, message, meta) => {
    if (level === 'error') log.error(meta ?? {}, message);
    else if (level === 'warning') log.warn(meta ?? {}, message);
    else log.debug(meta ?? {}, message);
  });
}
