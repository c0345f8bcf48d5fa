/**
 * Retention of the change stream: a graphile-worker crontab job (src/worker/tasks.ts), once per
 * schedule for the whole cluster, removes changes older than CHANGE_RETENTION_HOURS and moves
 * the horizon past them (queries.ts): a subscriber resuming from before it gets `reset`.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { sweepChanges } from './queries.js';

export const sweepChangesTask = (ctx: AppContext): Task => async () => {
  const before = new Date(ctx.clock.now().getTime() - ctx.config.realtime.retentionHours * 3600_000);
  const removed = await sweepChanges(ctx.db.admin, before);
  if (removed > 0) ctx.log.info({ removed }, 'change stream: old changes removed');
};
