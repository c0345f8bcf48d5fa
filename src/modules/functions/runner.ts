/**
 * Running one function: its project's rate limit, the sandbox pool with its kind's limits, the
 * invocation log, and what a caller sees when it fails (docs/functions.md "Errors"). Every
 * trigger (HTTP, hooks, schedules, "run" from the console) comes through here.
 */
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { compiledByHash, type ActiveFunctionRow } from './queries.js';
import { FunctionErrors } from './errors.js';
import { functionHost, type FunctionCaller } from './host.js';
import { KIND_HOST_LIMITS, KIND_LIMITS } from './limits.js';
import type { InvokeOutcome, PoolFailure } from './sandbox/pool.js';

export interface RunRequest {
  projectId: string;
  fn: ActiveFunctionRow;
  /** What called it, for the log: 'http', 'before.create', 'schedule', 'run', … */
  trigger: string;
  event: unknown;
  caller: FunctionCaller;
}

const CODE = /^[a-z][a-z0-9_]{0,63}$/;

async function enforceRate(ctx: AppContext, projectId: string): Promise<void> {
  try {
    await ctx.limits.enforce(`fn:${projectId}`, ctx.config.functions.invocationsPerMinute, 60);
  } catch (err) {
    if (err instanceof AppError && err.status === 429) throw FunctionErrors.function_rate_limited(undefined, undefined, { headers: err.headers });
    throw err;
  }
}

export async function runFunction(ctx: AppContext, req: RunRequest): Promise<InvokeOutcome> {
  const { projectId, fn } = req;
  await enforceRate(ctx, projectId);
  const env = await ctx.functions.registry.env(projectId);
  const outcome = await ctx.functions.pool.invoke({
    project: projectId,
    unit: `${projectId}:${fn.hash}`,
    source: async () => {
      const code = await compiledByHash(ctx.db.admin, projectId, fn.hash);
      if (code === undefined) throw new Error('this version is no longer deployed');
      return code;
    },
    entry: 'default',
    event: req.event,
    env,
    // The claims were verified with the token (tokens.ts); the function gets them as an object.
    caller: { userId: req.caller.userId, keyKind: req.caller.keyKind, claims: req.caller.claims ? (JSON.parse(req.caller.claims) as unknown) : null },
    limits: KIND_LIMITS[fn.kind],
    host: functionHost(ctx, projectId, req.caller, KIND_HOST_LIMITS[fn.kind]),
  });
  const error = outcome.ok ? null : failureError(outcome.failure, fn.kind === 'http' ? [400, 599] : [400, 499]);
  ctx.functions.log.record({
    project_id: projectId,
    function_id: fn.id,
    version: fn.version,
    trigger: req.trigger,
    ok: outcome.ok,
    error_code: error?.code ?? null,
    error: outcome.ok ? null : outcome.failure.message.slice(0, 2000),
    duration_ms: outcome.wallMs,
    cpu_ms: outcome.cpuMs,
    logs: outcome.logs,
    logs_dropped: outcome.logsDropped,
  });
  ctx.usage.add(projectId, 'functions.invocations');
  if (!outcome.ok) ctx.usage.add(projectId, 'functions.errors');
  if (!outcome.ok && outcome.failure.kind !== 'thrown') ctx.log.info({ projectId, function: fn.name, failure: outcome.failure.kind }, 'function stopped by a limit');
  return outcome;
}

/**
 * The error a caller sees for a failed invocation. A function's own error keeps its status and
 * code when they are well-formed and in `statuses` (hooks refuse with a 4xx); the rest is
 * `function_error`. Limits have their own codes; the message of an engine failure is ours.
 */
export function failureError(failure: PoolFailure, statuses: [number, number]): AppError {
  switch (failure.kind) {
    case 'thrown': {
      const status = typeof failure.status === 'number' && Number.isInteger(failure.status) ? failure.status : NaN;
      const code = typeof failure.code === 'string' && CODE.test(failure.code) ? failure.code : null;
      // The sandbox's own per-invocation limits, uncaught by the function: their codes, not a bare function_error.
      if (Number.isNaN(status) && code === 'function_host_calls_limit') return FunctionErrors.function_host_calls_limit();
      if (Number.isNaN(status) && code === 'function_timers_limit') return FunctionErrors.function_timers_limit();
      if (status >= statuses[0] && status <= statuses[1]) {
        // The function's own code: the app's vocabulary, not Plinth's catalogue.
        if (code) return new AppError(code, status, failure.message.slice(0, 1000));
        return FunctionErrors.function_refused(failure.message.slice(0, 1000), undefined, { status });
      }
      return FunctionErrors.function_error(failure.message ? `The function failed: ${failure.message.slice(0, 500)}` : undefined);
    }
    case 'cpu_limit':
      return FunctionErrors.function_cpu_limit();
    case 'wall_limit':
    case 'queue_timeout':
      return FunctionErrors.function_timeout();
    case 'memory_limit':
      return FunctionErrors.function_memory_limit();
    case 'stack_limit':
      return FunctionErrors.function_stack_limit();
    case 'result_too_large':
    case 'bad_result':
      return FunctionErrors.function_result_invalid(failure.message);
    case 'queue_full':
      return FunctionErrors.function_concurrency_limit();
    case 'compile':
    case 'no_entry':
      return FunctionErrors.function_error(failure.message);
    case 'host_calls_limit':
    case 'crashed':
    case 'closed':
      return FunctionErrors.function_unavailable();
  }
}
