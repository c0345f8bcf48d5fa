/**
 * The project's before-hooks (docs/functions.md "Before-hooks") on the data API's write paths:
 * single writes, bulk, batch, the operator's writes and imports all pass their incoming data
 * through here before their transaction opens (a hook may itself read and write). The hooks
 * live in the functions module, set on the context at boot (ctx.hooks.beforeWrite): the data
 * module knows only this slot.
 */
import type { AppContext } from '../../context.js';
import type { CollectionDef } from '../collections/cache.js';
import type { Access } from './access.js';

export type WriteEvent = 'create' | 'update' | 'delete';

/** The data as the hooks left it (unchanged when the project has none). */
export function beforeWrite(ctx: AppContext, col: CollectionDef, access: Access, event: WriteEvent, data: unknown, id?: string): Promise<unknown> {
  const hook = ctx.hooks.beforeWrite;
  if (!hook || access.skipHooks) return Promise.resolve(data);
  return hook({ projectId: col.project_id, collection: col.name, event, id, data, writer: { secret: access.secret, userId: access.userId, hookDepth: access.hookDepth, claims: access.scope.claims ?? null } });
}

/** A bulk create: each document through the hooks, in order. */
export async function beforeWriteMany(ctx: AppContext, col: CollectionDef, access: Access, body: unknown): Promise<unknown> {
  if (!ctx.hooks.beforeWrite || access.skipHooks || !Array.isArray(body)) return body;
  const out: unknown[] = [];
  for (const item of body) out.push(await beforeWrite(ctx, col, access, 'create', item));
  return out;
}
