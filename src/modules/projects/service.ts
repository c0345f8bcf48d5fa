/**
 * Projects, knowing no HTTP: creation with fresh keys (shown once) within the plan's limit,
 * then list, view, settings, delete and key rotation. Every change is announced on the bus so
 * each node drops its cached copy (a rotated key fails at once everywhere).
 */
import type { AppContext } from '../../context.js';
import { encrypt } from '../../lib/crypto.js';
import { planOf } from '../plans/plans.js';
import { DEFAULT_PROJECT_SETTINGS } from './defaults.js';
import { ProjectErrors } from './errors.js';
import { normaliseSiteUrl, type SettingsInput, settingsPatch } from './inputs.js';
import { newApiKey, newJwtSecret } from './keys.js';
import { collectionCounts, collectionsOf, countProjects, deleteProjectRow, insertProject, listMemberProjects, lockOwner, ownerPlanOf, type ProjectRow, updateProjectRow, usageOf } from './queries.js';
import { insertMember } from '../members/queries.js';
import type { Role } from '../members/roles.js';
import type { PlanName } from '../plans/plans.js';
import { dropPartitionsNow, enqueuePartitionCleanup } from '../collections/cleanup.js';
import { requireAal2IfEnrolled, type OperatorIdentity } from '../operators/auth.js';
import { loadMemberProject } from './access.js';
import { metricsOf, projectSummary, projectView, USAGE_METRICS } from './view.js';

// Re-exported: other domains import the project errors from here.
export { ProjectErrors };

export interface CreateProjectInput {
  name: string;
  description?: string;
  siteUrl?: string | null;
}

export async function createProject(ctx: AppContext, owner: { id: string; plan: string }, input: CreateProjectInput) {
  const limit = planOf(owner.plan).projectsPerOperator;
  const pk = newApiKey('publishable');
  const sk = newApiKey('secret');
  const row = await ctx.db.admin.transaction().execute(async (tx) => {
    // Serialise creations by the same operator so the limit check cannot race.
    await lockOwner(tx, owner.id);
    const count = await countProjects(tx, owner.id);
    if (limit >= 0 && count >= limit) {
      throw ProjectErrors.project_limit_reached(`Project limit reached (${limit}). Please upgrade your plan to create more projects.`);
    }
    const project = await insertProject(tx, {
      ownerId: owner.id,
      name: input.name.trim(),
      description: input.description ?? '',
      siteUrl: normaliseSiteUrl(input.siteUrl),
      publishableKeyHash: pk.hash,
      secretKeyHash: sk.hash,
      jwtSecret: encrypt(ctx.config.encryptionKey, newJwtSecret()),
      settings: DEFAULT_PROJECT_SETTINGS,
    });
    // Its creator is its owner member (docs/teams.md).
    await insertMember(tx, { projectId: project.id, operatorId: owner.id, role: 'owner', addedBy: owner.id });
    return project;
  });
  return { project: row, publishableKey: pk.raw, secretKey: sk.raw };
}


/** Usage against the project's plan (its owner's), by project id. */
async function metricsFor(ctx: AppContext, planOf: (id: string) => PlanName, ids: string[]) {
  const used = await usageOf(ctx.db.admin, ids, Object.values(USAGE_METRICS));
  return (id: string) =>
    metricsOf(planOf(id), {
      storage: used.get(`${id}:${USAGE_METRICS.storage}`) ?? 0,
      database: used.get(`${id}:${USAGE_METRICS.database}`) ?? 0,
    });
}

/** The projects the operator is a member of, each with the operator's role. */
export async function listProjects(ctx: AppContext, operator: OperatorIdentity) {
  const rows = await listMemberProjects(ctx.db.admin, operator.id);
  const ids = rows.map((r) => r.id);
  const plans = new Map(rows.map((r) => [r.id, r.owner_plan]));
  const [counts, metrics] = await Promise.all([collectionCounts(ctx.db.admin, ids), metricsFor(ctx, (id) => plans.get(id) ?? 'free', ids)]);
  return rows.map((r) => ({ ...projectSummary(r, counts.get(r.id) ?? 0, metrics(r.id)), role: r.role }));
}

/** The project as the dashboard shows it to a member with `role` (the caller's), on its owner's plan. */
export async function describeProject(ctx: AppContext, role: Role, row: ProjectRow) {
  const plan = await ownerPlanOf(ctx.db.admin, row.owner_id);
  const [collections, metrics] = await Promise.all([collectionsOf(ctx.db.admin, row.id), metricsFor(ctx, () => plan, [row.id])]);
  return { ...projectView(row, plan, collections, metrics(row.id)), role };
}

export async function getProject(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  const row = await loadMemberProject(ctx, operator, projectId);
  return describeProject(ctx, row.role, row);
}

export async function updateProjectSettings(ctx: AppContext, operator: OperatorIdentity, projectId: string, input: SettingsInput) {
  const current = await loadMemberProject(ctx, operator, projectId);
  const patch = settingsPatch(current, input, ctx.config.encryptionKey);
  const row = await updateProjectRow(ctx.db.admin, projectId, patch, ctx.clock.now());
  await ctx.bus.publish({ type: 'project_changed', id: projectId });
  return describeProject(ctx, current.role, row);
}

/**
 * Runs the deletion hooks (e.g. stored files, while the bucket settings still exist), then
 * deletes the row; every tenant table cascades from it, and the collections' document
 * partitions are dropped right after. A failing hook is logged, not fatal:
 * the operator asked for the data to be gone, and the rows must go regardless.
 */
export async function deleteProject(ctx: AppContext, operator: OperatorIdentity, projectId: string): Promise<void> {
  await loadMemberProject(ctx, operator, projectId);
  requireAal2IfEnrolled(operator);
  for (const hook of ctx.hooks.projectDeleting) {
    try {
      await hook(projectId);
    } catch (err) {
      ctx.log.error({ projectId, err: (err as Error).message }, 'project deletion hook failed');
    }
  }
  // Documents live in per-collection partitions, which a cascade cannot drop.
  await deleteProjectRow(ctx.db.admin, projectId, (tx) => enqueuePartitionCleanup(ctx, tx));
  await ctx.bus.publish({ type: 'project_changed', id: projectId }); // first: no node routes new writes to the partitions
  await dropPartitionsNow(ctx);
}

export async function rotateKey(ctx: AppContext, operator: OperatorIdentity, projectId: string, keyType: string) {
  if (keyType !== 'publishable' && keyType !== 'secret') throw ProjectErrors.invalid_key_type();
  const current = await loadMemberProject(ctx, operator, projectId);
  requireAal2IfEnrolled(operator);
  const key = newApiKey(keyType);
  const column = keyType === 'secret' ? 'secret_key_hash' : 'publishable_key_hash';
  const row = await updateProjectRow(ctx.db.admin, projectId, { [column]: key.hash }, ctx.clock.now());
  await ctx.bus.publish({ type: 'project_changed', id: projectId });
  return { apiKey: key.raw, keyType, project: await describeProject(ctx, current.role, row) };
}
