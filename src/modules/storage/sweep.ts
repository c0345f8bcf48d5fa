/**
 * Housekeeping: uploads never confirmed within 24 h are removed (object and row), and the bytes
 * they were charged at request time are refunded.
 *
 * Scheduling: uploads are grouped by the UTC hour they were requested in. The first
 * upload-request of an hour (per process) enqueues one `storage.sweep` job for that hour
 * (jobKey `storage.sweep:<YYYY-MM-DDTHH>`, payload `{hour}`, runAt = end of that hour + 24 h +
 * 1 min), before its row is inserted, so no pending row is ever without a sweep. The job reads
 * only its hour of uploads (files_created_idx), removes those pending for over 24 h (by
 * ctx.clock) and, if pending uploads of that hour remain (run early), re-arms itself for the
 * oldest of them. An upload that cannot be removed is skipped; the job then fails after the
 * others are done, and graphile-worker retries it.
 * The payload `{}` sweeps every stale upload of any hour (by hand, or from a crontab).
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { backendOfFile } from './backends.js';
import { deletePending, pendingCreatedIn, type FileRow } from './queries.js';

const SWEEP_TASK = 'storage.sweep';
const STALE_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
const BATCH = 200;


const hourOf = (at: Date) => at.toISOString().slice(0, 13);
const hourStart = (hour: string) => new Date(`${hour}:00:00Z`);

async function schedule(ctx: AppContext, hour: string, runAt: Date): Promise<void> {
  await ctx.queue.add(SWEEP_TASK, { hour }, { runAt, jobKey: `${SWEEP_TASK}:${hour}`, maxAttempts: 10 });
}

/** Makes sure a sweep is scheduled for uploads requested at `createdAt` (one call per hour). */
export async function ensureSweep(ctx: AppContext, createdAt: Date): Promise<void> {
  const hour = hourOf(createdAt);
  const done = ctx.storage.sweptHours;
  if (done.has(hour)) return;
  await schedule(ctx, hour, new Date(hourStart(hour).getTime() + HOUR_MS + STALE_MS + 60_000));
  done.set(hour, true);
}

async function sweepOne(ctx: AppContext, row: FileRow): Promise<boolean> {
  const project = await ctx.projects.byId(row.project_id);
  if (project) await backendOfFile(ctx, project, row.provider)?.remove([row.path]);
  await ctx.storage.resumable.forget(row.path);
  return !!(await ctx.db.admin.transaction().execute((tx) => deletePending(tx, row.project_id, row.id)));
}

/**
 * Removes the uploads pending since before `staleBefore` in [from, to). One upload whose store
 * fails (a project's broken bucket) does not hold up the others: it is logged, counted and
 * read again only while others still make progress.
 */
async function sweepWindow(ctx: AppContext, from: Date | null, to: Date, staleBefore: Date) {
  const end = new Date(Math.min(to.getTime(), staleBefore.getTime()));
  let removed = 0;
  const failed = new Set<string>();
  for (;;) {
    const rows = await pendingCreatedIn(ctx.db.admin, from, end, BATCH);
    let progressed = false;
    for (const row of rows) {
      const gone = await sweepOne(ctx, row).catch((err) => {
        ctx.log.warn({ err, path: row.path }, 'storage: could not remove a stale upload');
        failed.add(row.id);
        return false;
      });
      if (gone) removed++;
      progressed ||= gone;
    }
    if (rows.length < BATCH || !progressed) return { removed, failed: failed.size };
  }
}

const isHour = (v: unknown): v is string => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}:00:00Z`));

export function sweepTask(ctx: AppContext): Task {
  return async (payload) => {
    const given = (payload as { hour?: unknown } | null)?.hour;
    const hour = isHour(given) ? given : null;
    const staleBefore = new Date(ctx.clock.now().getTime() - STALE_MS);
    const from = hour ? hourStart(hour) : null;
    const to = from ? new Date(from.getTime() + HOUR_MS) : staleBefore;
    const { removed, failed } = await sweepWindow(ctx, from, to, staleBefore);
    if (removed) ctx.log.info({ removed, hour: hour ?? 'all' }, 'storage: stale uploads removed');
    // graphile-worker retries the job (with backoff) for the ones that could not be removed.
    if (failed) throw new Error(`${failed} stale upload(s) could not be removed`);
    if (!hour) return;
    const [oldest] = await pendingCreatedIn(ctx.db.admin, from, to, 1);
    if (oldest) await schedule(ctx, hour, new Date(new Date(oldest.created_at).getTime() + STALE_MS + 60_000));
  };
}
