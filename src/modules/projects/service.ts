/** Projects: creation with fresh keys (shown once), plan limits. Knows no HTTP. */
import type { AppContext } from '../../context.js';
import { encrypt } from '../../lib/crypto.js';
import { planOf } from '../plans/plans.js';
import { DEFAULT_PROJECT_SETTINGS } from './defaults.js';
import { ProjectErrors } from './errors.js';
import { normaliseSiteUrl } from './settings.js';
import { newApiKey, newJwtSecret } from './keys.js';
import { countProjects, insertProject, lockOwner } from './queries.js';

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
    return insertProject(tx, {
      ownerId: owner.id,
      name: input.name.trim(),
      description: input.description ?? '',
      siteUrl: normaliseSiteUrl(input.siteUrl),
      publishableKeyHash: pk.hash,
      secretKeyHash: sk.hash,
      jwtSecret: encrypt(ctx.config.encryptionKey, newJwtSecret()),
      settings: DEFAULT_PROJECT_SETTINGS,
    });
  });
  return { project: row, publishableKey: pk.raw, secretKey: sk.raw };
}
