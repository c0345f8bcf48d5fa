/**
 * Housekeeping: uploads never confirmed within 24 h are removed (object and row).
 *
 * Scheduling: uploads are grouped by the UTC hour they were requested in. The first
 * upload-request of an hour (per process) enqueues one `storage.sweep` job for that hour
 * (jobKey `storage.sweep:<YYYY-MM-DDTHH>`, runAt = end of that hour + 24 h + 1 min), before its
 * row is inserted. The job removes every pending upload older than 24 h (by ctx.clock) and, if
 * pending uploads remain, schedules the next sweep for the oldest of them: a chain that never
 * leaves a pending row without a future sweep, at one job per hour instead of one per upload.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { backendOfFile } from './backends.js';
import { deletePending, stalePending, type FileRow } from './queries.js';

const SWEEP_TASK = 'storage.sweep';
const STALE_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;

const scheduledHours = new WeakMap<AppContext, Set<string>>();

async function scheduleFor(ctx: AppContext, createdAt: Date): Promise<void> {
  const hour = createdAt.toISOString().slice(0, 13);
  const runAt = new Date(Date.parse(`${hour}:00:00Z`) + HOUR_MS + STALE_MS + 60_000);
  await ctx.queue.add(SWEEP_TASK, {}, { runAt, jobKey: `${SWEEP_TASK}:${hour}`, maxAttempts: 10 });
}

/** Makes sure a sweep is scheduled for uploads requested at `createdAt` (one call per hour). */
export async function ensureSweep(ctx: AppContext, createdAt: Date): Promise<void> {
  const hour = createdAt.toISOString().slice(0, 13);
  let done = scheduledHours.get(ctx);
  if (!done) scheduledHours.set(ctx, (done = new Set()));
  if (done.has(hour)) return;
  await scheduleFor(ctx, createdAt);
  if (done.size > 48) done.clear();
  done.add(hour);
}

async function sweepOne(ctx: AppContext, row: FileRow): Promise<boolean> {
  const project = await ctx.projects.byId(row.project_id);
  if (project) await backendOfFile(ctx, project, row.provider)?.remove([row.path]);
  return !!(await deletePending(ctx.db.admin, row.project_id, row.id));
}

/** Removes every pending upload older than 24 h (by ctx.clock); returns how many. */
async function sweepStale(ctx: AppContext, batch = 200): Promise<number> {
  const before = new Date(ctx.clock.now().getTime() - STALE_MS);
  let removed = 0;
  for (;;) {
    const rows = await stalePending(ctx.db.admin, before, batch);
    for (const row of rows) if (await sweepOne(ctx, row)) removed++;
    if (rows.length < batch) return removed;
  }
}

export function sweepTask(ctx: AppContext): Task {
  return async () => {
    const removed = await sweepStale(ctx);
    if (removed) ctx.log.info({ removed }, 'storage: stale uploads removed');
    const oldest = await ctx.db.admin
      .selectFrom('files')
      .select('created_at')
      .where('status', '=', 'pending')
      .orderBy('created_at')
      .limit(1)
      .executeTakeFirst();
    if (oldest) await scheduleFor(ctx, new Date(oldest.created_at));
  };
}
