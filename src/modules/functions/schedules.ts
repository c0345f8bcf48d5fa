/**
 * Schedules (docs/functions.md "Schedules"): functions of kind `schedule` with a cron
 * expression in UTC. The crontab job `functions:schedule` (src/worker/tasks.ts) runs once a
 * minute for the whole cluster (src/worker/cron.ts) and enqueues, for that minute, one
 * `functions.run` job per enabled schedule whose expression matches it, keyed
 * `fn:<functionId>:<minute>`, and the minute recorded per function in graphile-worker's
 * crontab bookkeeping (job-queries.ts): a second scheduling of the same minute, by another
 * process or a retried job, adds nothing, even after the first run finished. All of a
 * minute's jobs are added in one statement, so a failure leaves none of them and the retry
 * adds them all; a minute earlier than one already scheduled is never run.
 */
import { parseCrontab, type ParsedCronItem, type Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { enabledSchedules, enqueueScheduledRuns, type JobOf } from './job-queries.js';

const MINUTE = 60_000;

const parsed = new Map<string, ParsedCronItem | null>();

/** Whether a (validated, triggers.ts) cron expression matches the UTC minute of `ms`; an unreadable one never does. */
export function cronMatches(cron: string, ms: number): boolean {
  let item = parsed.get(cron);
  if (item === undefined) {
    try {
      item = parseCrontab(`${cron} functions_schedule`)[0] ?? null;
    } catch {
      item = null;
    }
    if (parsed.size > 10_000) parsed.clear();
    parsed.set(cron, item);
  }
  if (!item) return false;
  const d = new Date(ms);
  return item.match({ min: d.getUTCMinutes(), hour: d.getUTCHours(), date: d.getUTCDate(), month: d.getUTCMonth() + 1, dow: d.getUTCDay() });
}

/** The minute a crontab job stands for: its `_cron.ts` (src/worker/cron.ts), else the current one. */
export function tickOf(payload: unknown, now: number): number {
  const ts = (payload as { _cron?: { ts?: unknown } } | null)?._cron?.ts;
  const at = typeof ts === 'string' ? Date.parse(ts) : NaN;
  return Math.floor((Number.isFinite(at) ? at : now) / MINUTE) * MINUTE;
}

/** Enqueues the runs due at the minute `tick` (ms); how many schedules matched. */
export async function enqueueSchedules(ctx: AppContext, tick: number): Promise<number> {
  const rows = await enabledSchedules(ctx.db.admin);
  const scheduledAt = new Date(tick).toISOString();
  const jobs: JobOf[] = rows
    .filter((r) => typeof r.cron === 'string' && cronMatches(r.cron, tick))
    .map((r) => ({
      key: `fn:${r.id}:${scheduledAt}`,
      job: { projectId: r.project_id, functionId: r.id, kind: 'schedule', trigger: 'schedule', event: { id: `sch_${r.id}_${tick / MINUTE}`, scheduledAt } },
    }));
  await enqueueScheduledRuns(ctx.db.admin, new Date(tick), jobs);
  return jobs.length;
}

export const scheduleTask = (ctx: AppContext): Task => async (payload) => {
  await enqueueSchedules(ctx, tickOf(payload, ctx.clock.now().getTime()));
};
