/**
 * The audit log's retention (docs/audit.md): a graphile-worker crontab job (src/worker/tasks.ts),
 * once per schedule for the whole cluster, removes entries older than AUDIT_RETENTION_DAYS and
 * records each project's cut as its chain's anchor, so verification still passes. The only
 * thing that deletes entries.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { trimAudit } from './service.js';

export const trimAuditTask = (ctx: AppContext): Task => async () => {
  const removed = await trimAudit(ctx);
  if (removed > 0) ctx.log.info({ removed }, 'audit log trimmed');
};
