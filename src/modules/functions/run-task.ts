/**
 * The `functions.run` task (job-queries.ts): one invocation of an after-hook or a schedule, retried
 * by graphile-worker when it fails (docs/functions.md "After-hooks").
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { failureError, runFunction } from './runner.js';
import type { RunJob } from './job-queries.js';

/** The invocation failed: thrown so that graphile-worker retries the job (its last_error says why). */
export class FunctionRunFailed extends Error {}

/**
 * `functions.run`: one invocation of the function's active version. A function deleted,
 * disabled or changed to another kind since the job was enqueued is not run.
 */
export const runHookTask = (ctx: AppContext): Task => async (payload, helpers) => {
  const job = payload as Partial<RunJob>;
  if (typeof job.projectId !== 'string' || typeof job.functionId !== 'string' || !job.event) return;
  const fn = (await ctx.functions.registry.get(job.projectId)).all.find((f) => f.id === job.functionId);
  if (!fn || !fn.enabled || fn.kind !== job.kind) return;
  const outcome = await runFunction(ctx, {
    projectId: job.projectId,
    fn,
    trigger: typeof job.trigger === 'string' ? job.trigger : fn.kind,
    event: job.event,
    caller: { keyKind: 'publishable', userId: null },
  });
  if (outcome.ok) return;
  const error = failureError(outcome.failure, [400, 499]);
  const attempt = helpers.job.attempts;
  throw new FunctionRunFailed(`${error.code}: ${error.message} (attempt ${attempt} of ${helpers.job.max_attempts})`);
};
