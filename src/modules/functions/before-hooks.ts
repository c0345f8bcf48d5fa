/**
 * Before-hooks (docs/functions.md "Before-hooks"): a project's functions of kind `before` on a
 * collection's create, update or delete, run in the write's path before its transaction opens,
 * in name order, each seeing the data the previous one left. A hook returns `{ data }` to
 * change the incoming document (create) or patch (update), nothing to let it through, or throws
 * to refuse it: a 4xx of its own reaches the client as it threw it; anything else (a bug, a
 * limit) refuses the write too, with the function's error code. Fail closed: a write its hook
 * could not judge is not made.
 */
import type { AppContext, BeforeWriteInput } from '../../context.js';
import { FunctionErrors } from './errors.js';
import { failureError, runFunction } from './runner.js';

/** Writes a before-hook makes through plinth.data run hooks too, up to this depth. */
export const MAX_HOOK_DEPTH = 2;

export function registerBeforeHooks(ctx: AppContext): void {
  ctx.hooks.beforeWrite = (input) => runBeforeHooks(ctx, input);
}

async function runBeforeHooks(ctx: AppContext, input: BeforeWriteInput): Promise<unknown> {
  const hooks = await ctx.functions.registry.beforeHooks(input.projectId, input.collection, input.event);
  if (hooks.length === 0) return input.data;
  const depth = input.writer.hookDepth ?? 0;
  if (depth >= MAX_HOOK_DEPTH) throw FunctionErrors.function_recursion_limit();
  let data = input.data;
  for (const fn of hooks) {
    const event = { collection: input.collection, operation: input.event, id: input.id ?? null, data: data ?? null, user: input.writer.userId ? { id: input.writer.userId } : null };
    const caller = { keyKind: input.writer.secret ? ('secret' as const) : ('publishable' as const), userId: input.writer.userId, claims: input.writer.claims ?? null, hookDepth: depth + 1 };
    const outcome = await runFunction(ctx, { projectId: input.projectId, fn, trigger: `before.${input.event}`, event, caller });
    if (!outcome.ok) throw failureError(outcome.failure, [400, 499]);
    const v = outcome.value;
    if (input.event !== 'delete' && v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, 'data')) data = (v as { data: unknown }).data;
  }
  return data;
}
