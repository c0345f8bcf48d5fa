/**
 * A project's usage over time as the dashboard reads it (docs/dashboard.md "Usage history"):
 * per UTC hour in [from, to), each metric asked for as one dense series (0 for an hour nothing
 * was counted; null for a sampled gauge not sampled that hour), with the plan's limits that
 * apply to them. Knows no HTTP. Reads after the operator's ownership of the project is checked
 * (404 otherwise), after this node's counts are written (on one node, a request is in its
 * hour at once).
 */
import type { AppContext } from '../../context.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { loadMemberProject } from '../projects/access.js';
import { planOf } from '../plans/plans.js';
import { monthlyLimit } from '../mail/quota.js';
import { senderKindFor } from '../mail/providers/select.js';
import { UsageErrors } from './errors.js';
import { expandMetrics, GAUGES } from './metrics.js';
import { hourlyUsage, usageTotal } from './queries.js';

const HOUR = 3600_000;
export const MAX_RANGE_DAYS = 90;
export const DEFAULT_RANGE_DAYS = 7;

export interface HistoryQuery {
  from?: string;
  to?: string;
  /** Comma-separated metric names or families (`requests`, `mail`, `functions.errors`). */
  metrics?: string;
}

function parseTime(raw: string | undefined, name: string): Date | undefined {
  if (raw === undefined) return undefined;
  const ms = Date.parse(raw);
  if (!Number.isFinite(ms)) throw UsageErrors.usage_range_invalid(`\`${name}\` is not a valid time (ISO 8601, e.g. 2026-11-01T00:00:00Z).`);
  return new Date(ms);
}

/** The hours asked for: `from` down and `to` up to whole hours, at most MAX_RANGE_DAYS. */
export function resolveRange(q: HistoryQuery, now: Date): { from: Date; to: Date } {
  const toRaw = parseTime(q.to, 'to') ?? new Date(now.getTime() + 1);
  const to = new Date(Math.ceil(toRaw.getTime() / HOUR) * HOUR);
  const fromRaw = parseTime(q.from, 'from') ?? new Date(to.getTime() - DEFAULT_RANGE_DAYS * 24 * HOUR);
  const from = new Date(Math.floor(fromRaw.getTime() / HOUR) * HOUR);
  if (from >= to) throw UsageErrors.usage_range_invalid('`from` must be before `to`.');
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * 24 * HOUR) {
    throw UsageErrors.usage_range_invalid(`The range spans more than ${MAX_RANGE_DAYS} days; ask for a shorter one.`);
  }
  return { from, to };
}

export function resolveMetrics(raw: string | undefined): string[] {
  const names = (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) return expandMetrics(['requests', 'data', 'file', 'mail', 'realtime', 'functions', 'ai']).metrics;
  const { metrics, unknown } = expandMetrics(names);
  if (unknown.length > 0) throw UsageErrors.usage_metric_unknown(`Unknown usage metric: ${unknown.slice(0, 5).join(', ')}.`);
  return metrics;
}

async function mailMonthToDate(ctx: AppContext, projectId: string, from: Date, sent: number[]): Promise<number[]> {
  const monthStart = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), 1));
  let total = monthStart < from ? await usageTotal(ctx.db.admin, projectId, 'mail.sent', monthStart, from) : 0;
  return sent.map((n, i) => {
    const hour = new Date(from.getTime() + i * HOUR);
    if (i > 0 && hour.getUTCDate() === 1 && hour.getUTCHours() === 0) total = 0;
    total += n;
    return total;
  });
}

export async function usageHistory(ctx: AppContext, operator: OperatorIdentity, projectId: string, q: HistoryQuery) {
  const project = await loadMemberProject(ctx, operator, projectId);
  const { from, to } = resolveRange(q, ctx.clock.now());
  const metrics = resolveMetrics(q.metrics);
  await ctx.usage.flush();
  const rows = await hourlyUsage(ctx.db.admin, project.id, from, to, metrics);
  const count = (to.getTime() - from.getTime()) / HOUR;
  const hours = Array.from({ length: count }, (_, i) => new Date(from.getTime() + i * HOUR).toISOString());
  const series: Record<string, Array<number | null>> = {};
  for (const m of metrics) series[m] = new Array<number | null>(count).fill(GAUGES.has(m) ? null : 0);
  for (const r of rows) {
    const i = (new Date(r.hour).getTime() - from.getTime()) / HOUR;
    const s = series[r.metric];
    if (s && i >= 0 && i < count) s[i] = Number(r.value);
  }
  // Mail's limit is per UTC month: the running total of each hour's month (from the month's
  // start, even before `from`) is what the limit is drawn against.
  if (series['mail.sent']) series['mail.sent.month'] = await mailMonthToDate(ctx, project.id, from, series['mail.sent'] as number[]);
  const plan = planOf(operator.plan);
  const mailLimit = monthlyLimit(ctx, plan, senderKindFor(ctx, project) === 'byok');
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    step: 'hour' as const,
    hours,
    series,
    // -1: unlimited. Database and file bytes are limits on the sampled total; mail and AI are per
    // UTC month (the console draws them on the month's running total).
    limits: { databaseBytes: plan.databaseBytes, storageBytes: plan.storageBytes, mailPerMonth: mailLimit, aiSessionsPerMonth: plan.aiSessionsPerMonth },
  };
}
