/**
 * The usage history's jobs (src/worker/tasks.ts crontab, once per schedule for the cluster):
 * `usage:sample` writes each project's stored database and file bytes into the current hour
 * and recounts its mail sent and bounced for the last hours from the mail log (a bounce arrives
 * after the send: it is counted in the hour the message was sent); `usage:trim` deletes the
 * hours older than USAGE_RETENTION_DAYS. Both are idempotent: a sample replaces the hour's value.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { deleteHoursBefore, deleteProjectUsage, mailByHour, storedBytes, writeSamples, type Sample } from './queries.js';

const HOUR = 3600_000;
/** How many hours back the mail counts are recomputed (late bounces, queued mail sent later). */
export const MAIL_RECOUNT_HOURS = 3;

export async function sampleUsage(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now().getTime();
  const hour = new Date(Math.floor(now / HOUR) * HOUR);
  const samples: Sample[] = [];
  for (const r of await storedBytes(ctx.db.admin)) {
    samples.push({ projectId: r.project_id, hour, metric: 'data.bytes', value: Number(r.db_bytes) });
    samples.push({ projectId: r.project_id, hour, metric: 'file.bytes', value: Number(r.storage_bytes) });
  }
  const since = new Date(hour.getTime() - (MAIL_RECOUNT_HOURS - 1) * HOUR);
  for (const r of await mailByHour(ctx.db.admin, since)) {
    const at = new Date(r.hour);
    samples.push({ projectId: r.project_id, hour: at, metric: 'mail.sent', value: Number(r.sent) });
    samples.push({ projectId: r.project_id, hour: at, metric: 'mail.bounced', value: Number(r.bounced) });
  }
  await writeSamples(ctx.db.admin, samples);
  return samples.length;
}

export async function trimUsage(ctx: AppContext): Promise<number> {
  return deleteHoursBefore(ctx.db.admin, new Date(ctx.clock.now().getTime() - ctx.config.usage.retentionDays * 24 * HOUR));
}

export const sampleUsageTask = (ctx: AppContext): Task => async () => {
  await sampleUsage(ctx);
};

export const trimUsageTask = (ctx: AppContext): Task => async () => {
  const removed = await trimUsage(ctx);
  if (removed > 0) ctx.log.debug({ removed }, 'usage history trimmed');
};

/** A deleted project's history and sent alerts go with it (no foreign key on the hourly table). */
export function registerUsageHooks(ctx: AppContext): void {
  ctx.hooks.projectDeleting.push((projectId) => deleteProjectUsage(ctx.db.admin, projectId));
}
