/**
 * Backup schedules (docs/backup.md "Scheduled backups"): a preset (`off`, `daily`, `weekly`) or
 * a cron expression (`custom`, 5 fields, UTC), and the retention (keep N daily and M weekly).
 * A project without a schedule of its own follows its owner's plan: daily on paid plans, off on
 * free (the admin may change both defaults: BACKUP_DEFAULT_PAID, BACKUP_DEFAULT_FREE). Daily
 * and weekly runs are spread over 00:00–05:59 UTC by the project's id, so a node's projects do
 * not all start their backup at the same minute. Knows no HTTP.
 */
import { createHash } from 'node:crypto';
import { parseCrontab } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { cronMatches } from '../functions/schedules.js';
import { BackupErrors } from './errors.js';
import * as bq from './backup-queries.js';

export type Preset = bq.Preset;
export const PRESETS: readonly Preset[] = ['off', 'daily', 'weekly', 'custom'];

export const DEFAULT_KEEP_DAILY = 7;
export const DEFAULT_KEEP_WEEKLY = 4;

export interface Schedule {
  preset: Preset;
  /** The expression that runs (UTC); null when off. */
  cron: string | null;
  timeZone: 'UTC';
  keepDaily: number;
  keepWeekly: number;
  /** True: the plan's default, no schedule of the project's own. */
  isDefault: boolean;
}

export interface ScheduleInput {
  preset: Preset;
  cron?: string;
  keepDaily?: number;
  keepWeekly?: number;
}

/** The project's minute and hour of a daily or weekly run: spread by its id over 00:00–05:59 UTC. */
function spreadOf(projectId: string): { minute: number; hour: number } {
  const n = createHash('sha256').update(projectId).digest().readUInt32BE(0);
  return { minute: n % 60, hour: Math.floor(n / 60) % 6 };
}

/** The cron expression of a preset for a project (null: off). */
export function cronOfPreset(projectId: string, preset: Preset, cron: string | null): string | null {
  if (preset === 'off') return null;
  if (preset === 'custom') return cron;
  const { minute, hour } = spreadOf(projectId);
  return preset === 'daily' ? `${minute} ${hour} * * *` : `${minute} ${hour} * * 0`;
}

/** The schedule of a project that has none of its own. */
export function defaultPreset(ctx: AppContext, plan: string): Preset {
  return plan === 'pro' ? ctx.config.backups.defaultPaid : ctx.config.backups.defaultFree;
}

export function effectiveSchedule(ctx: AppContext, projectId: string, plan: string, own: bq.ScheduleRow | null): Schedule {
  if (!own) {
    const preset = defaultPreset(ctx, plan);
    return { preset, cron: cronOfPreset(projectId, preset, null), timeZone: 'UTC', keepDaily: DEFAULT_KEEP_DAILY, keepWeekly: DEFAULT_KEEP_WEEKLY, isDefault: true };
  }
  return { preset: own.preset, cron: cronOfPreset(projectId, own.preset, own.cron), timeZone: 'UTC', keepDaily: own.keep_daily, keepWeekly: own.keep_weekly, isDefault: false };
}

/** A 5-field cron expression graphile-worker's crontab reads (the one the workers run). */
export function checkCron(cron: string): void {
  const fields = cron.trim().split(/\s+/);
  let ok = fields.length === 5;
  if (ok) {
    try {
      ok = parseCrontab(`${fields.join(' ')} backups_check`).length === 1;
    } catch {
      ok = false;
    }
  }
  if (!ok) throw BackupErrors.backup_schedule_invalid(`"${cron}" is not a cron expression of 5 fields (minute hour day month weekday, UTC), e.g. "30 2 * * *".`);
}

export async function getSchedule(ctx: AppContext, project: { id: string }, plan: string): Promise<Schedule> {
  return effectiveSchedule(ctx, project.id, plan, await bq.scheduleOf(ctx.db.admin, project.id));
}

export async function setSchedule(ctx: AppContext, project: { id: string }, plan: string, input: ScheduleInput): Promise<Schedule> {
  if (input.preset === 'custom') {
    if (!input.cron) throw BackupErrors.backup_schedule_invalid('A custom schedule needs `cron`, a cron expression in UTC.');
    checkCron(input.cron);
  } else if (input.cron !== undefined) {
    throw BackupErrors.backup_schedule_invalid('`cron` goes with the preset `custom` only.');
  }
  const row: bq.ScheduleRow = {
    preset: input.preset,
    cron: input.preset === 'custom' ? input.cron!.trim().split(/\s+/).join(' ') : null,
    keep_daily: input.keepDaily ?? DEFAULT_KEEP_DAILY,
    keep_weekly: input.keepWeekly ?? DEFAULT_KEEP_WEEKLY,
  };
  if (row.keep_daily + row.keep_weekly < 1) throw BackupErrors.backup_schedule_invalid('Keep at least one backup (keepDaily + keepWeekly ≥ 1).');
  await bq.upsertSchedule(ctx.db.admin, project.id, row, ctx.clock.now());
  return effectiveSchedule(ctx, project.id, plan, row);
}

/** The projects whose backup is due at the minute `tick` (ms). */
export async function dueProjects(ctx: AppContext, tick: number): Promise<string[]> {
  const rows = await bq.allSchedules(ctx.db.admin);
  return rows
    .map((r) => ({ id: r.project_id, s: effectiveSchedule(ctx, r.project_id, r.plan, r.preset ? (r as bq.ScheduleRow) : null) }))
    .filter(({ s }) => s.cron !== null && cronMatches(s.cron, tick))
    .map(({ id }) => id);
}
