/**
 * Platform administration (the operator whose email is ADMIN_EMAIL): list operators, set an
 * operator's plan. A plan change applies at once: each of their projects is announced as
 * changed, so every node reloads it with the new plan's limits.
 */
import type { AppContext } from '../../context.js';
import { Errors } from '../../lib/errors.js';
import { isObjectId } from '../../lib/ids.js';
import { loadOperator, toPublic } from '../operators/service.js';
import { AdminErrors } from './errors.js';
import { listOperatorsWithCounts, setPlan } from './queries.js';

export async function listOperators(ctx: AppContext) {
  const rows = await listOperatorsWithCounts(ctx.db.admin);
  return rows.map((r) => ({ ...toPublic(ctx, r), projectsCount: Number(r.projects_count) }));
}

export async function changePlan(ctx: AppContext, operatorId: string, plan: string) {
  if (!isObjectId(operatorId)) throw Errors.invalid_id('Invalid operator id.');
  if (plan !== 'free' && plan !== 'pro') throw AdminErrors.invalid_plan();
  const projectIds = await setPlan(ctx.db.admin, operatorId, plan, ctx.clock.now());
  if (!projectIds) throw AdminErrors.operator_missing();
  for (const id of projectIds) await ctx.bus.publish({ type: 'project_changed', id });
  ctx.log.info({ operatorId, plan, projects: projectIds.length }, 'operator plan changed');
  return loadOperator(ctx, operatorId);
}
