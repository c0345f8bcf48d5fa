/** Runs every job that is due now, to completion, with the real task handlers. */
import { Logger, runOnce } from 'graphile-worker';
import { buildTaskList } from '../../src/worker/tasks.js';
import type { TestEnv } from './context.js';

const quiet = new Logger(() => () => {});

export async function drainJobs(env: TestEnv): Promise<void> {
  await runOnce({ pgPool: env.ctx.db.pool, taskList: buildTaskList(env.ctx), noHandleSignals: true, logger: quiet });
}
