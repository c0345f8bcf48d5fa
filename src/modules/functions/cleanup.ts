/** The invocation log's trim job: its retention and its per-project cap (FUNCTIONS_LOG_*). */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { trimInvocations } from './queries.js';

export const trimInvocationsTask = (ctx: AppContext): Task => async () => {
  const removed = await trimInvocations(ctx.db.admin, ctx.config.functions.logRetentionHours, ctx.config.functions.maxLogRowsPerProject);
  if (removed > 0) ctx.log.debug({ removed }, 'function invocation log trimmed');
};
