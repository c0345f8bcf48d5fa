/**
 * A project's usage this month against its plan, for the console's usage screen: database and
 * storage bytes, collections, mail sent this UTC month (the limit of the key in use), and the
 * owner's platform-key AI sessions this month (shared by all their projects). Read from the
 * same counters the quotas guard, so the numbers are the ones that refuse work.
 */
import type { AppContext } from '../../context.js';
import { utcMonth } from '../../lib/clock.js';
import { METRICS, usage } from '../../lib/quota-queries.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { mailCounter, monthlyLimit } from '../mail/quota.js';
import { senderKindFor } from '../mail/providers/select.js';
import { planOf } from '../plans/plans.js';
import { countConfirmed } from '../storage/queries.js';
import { loadMemberProject } from './access.js';
import { collectionCounts } from './queries.js';

export async function projectUsage(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  const row = await loadMemberProject(ctx, operator, projectId);
  const plan = planOf(operator.plan);
  const period = utcMonth(ctx.clock.now());
  const mailKind = senderKindFor(ctx, row);
  const [db, storage, files, mail, ai, collections] = await Promise.all([
    usage(ctx.db.admin, { subjectId: row.id, metric: METRICS.dbBytes }),
    usage(ctx.db.admin, { subjectId: row.id, metric: METRICS.storageBytes }),
    countConfirmed(ctx.db.admin, row.id),
    usage(ctx.db.admin, mailCounter(row.id, period)),
    usage(ctx.db.admin, { subjectId: operator.id, metric: METRICS.aiSessions, period }),
    collectionCounts(ctx.db.admin, [row.id]),
  ]);
  return {
    period,
    plan: operator.plan,
    database: { used: db, limit: plan.databaseBytes },
    storage: { used: storage, limit: plan.storageBytes, files },
    collections: { used: collections.get(row.id) ?? 0, limit: plan.collectionsPerProject },
    mail: { used: mail, limit: monthlyLimit(ctx, plan, mailKind === 'byok'), provider: mailKind },
    aiSessions: { used: ai, limit: plan.aiSessionsPerMonth },
  };
}
