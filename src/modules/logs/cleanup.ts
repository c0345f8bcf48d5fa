/**
 * The request log's bounds (docs/dashboard.md "Request log"): a graphile-worker crontab job
 * (src/worker/tasks.ts), once per schedule for the whole cluster, deletes the rows older than
 * REQUEST_LOG_RETENTION_HOURS and, per project, those beyond its REQUEST_LOG_MAX_ROWS newest.
 * Between two runs a project may hold more than the cap (what it sent in the meantime).
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { deleteProjectRequests, deleteRequestsBefore, trimRequestsPerProject } from './queries.js';

export async function trimRequestLog(ctx: AppContext): Promise<{ expired: number; overCap: number }> {
  const { retentionHours, maxRowsPerProject } = ctx.config.requestLog;
  const expired = await deleteRequestsBefore(ctx.db.admin, new Date(ctx.clock.now().getTime() - retentionHours * 3600_000));
  const overCap = await trimRequestsPerProject(ctx.db.admin, maxRowsPerProject);
  return { expired, overCap };
}

export const trimRequestLogTask = (ctx: AppContext): Task => async () => {
  const removed = await trimRequestLog(ctx);
  if (removed.expired + removed.overCap > 0) ctx.log.debug(removed, 'request log trimmed');
};

/** A deleted project's log goes with it (the table has no foreign key). */
export function registerRequestLogHooks(ctx: AppContext): void {
  ctx.hooks.projectDeleting.push((projectId) => deleteProjectRequests(ctx.db.admin, projectId));
}
