/** Storage's lifecycle hooks: deleting a project removes its stored files on every backend. */
import type { AppContext } from '../../context.js';
import { backendOfFile, platformDriver } from './backends.js';

export function registerStorageHooks(ctx: AppContext): void {
  ctx.hooks.projectDeleting.push(async (projectId) => {
    await platformDriver(ctx).removePrefix(projectId);
    const project = await ctx.projects.byId(projectId);
    if (project) await backendOfFile(ctx, project, 'external')?.removePrefix(projectId);
  });
}
