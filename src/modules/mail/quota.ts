/**
 * The monthly mail quota: one counter per project per UTC month (usage_counters, metric
 * 'mail'), reserved with the guarded upsert of lib/quota-queries.ts in the same transaction as the
 * MailLog and the job. The limit depends on the key in use (plan table: shared key vs own
 * key); MAIL_MONTHLY_LIMIT replaces it for every project (self-hosting, tests).
 */
import type { AppContext } from '../../context.js';
import { utcMonth } from '../../lib/clock.js';
import { METRICS, type Counter } from '../../lib/quota-queries.js';
import type { Plan } from '../plans/plans.js';

export function mailCounter(projectId: string, period: string): Counter {
  return { subjectId: projectId, metric: METRICS.mail, period };
}

export function currentPeriod(ctx: AppContext): string {
  return utcMonth(ctx.clock.now());
}

export function monthlyLimit(ctx: AppContext, plan: Plan, ownKey: boolean): number {
  return ctx.config.mail.monthlyLimitOverride ?? (ownKey ? plan.mailPerMonthOwnKey : plan.mailPerMonthSharedKey);
}
