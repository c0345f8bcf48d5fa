/**
 * Invoking functions from outside the sandbox: an HTTP function answering its request, and the
 * console's "run with this body". Knows no HTTP framework: the route hands it a request's parts
 * and sends what it returns.
 */
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { FunctionErrors } from './errors.js';
import type { FunctionCaller } from './host.js';
import { failureError, runFunction } from './runner.js';

export interface HttpEventInput {
  method: string;
  /** The part of the path after /api/functions/:name ('' or '/…'). */
  path: string;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body: unknown;
  bodyEncoding?: 'base64';
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
}

/** Headers the function may not set: the server decides framing, CORS and cookies on its shared origin. */
const FORBIDDEN_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'set-cookie', 'set-cookie2', 'trailer', 'date', 'server']);
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
const MAX_RESPONSE_HEADERS = 50;

export async function callHttpFunction(ctx: AppContext, projectId: string, name: string, caller: FunctionCaller, event: HttpEventInput): Promise<HttpAnswer> {
  const fn = (await ctx.functions.registry.get(projectId)).byName.get(name);
  if (!fn || fn.kind !== 'http' || !fn.enabled) throw FunctionErrors.function_not_found();
  const outcome = await runFunction(ctx, { projectId, fn, trigger: 'http', event, caller });
  if (!outcome.ok) throw failureError(outcome.failure, [400, 599]);
  return httpAnswer(outcome.value);
}

/**
 * What a function returned, as an HTTP answer: `plinth.response(body, {status, headers})` (a
 * tagged object) sets all three; any other value is sent as JSON with 200.
 */
export function httpAnswer(value: unknown): HttpAnswer {
  if (!value || typeof value !== 'object' || (value as { __plinthResponse?: unknown }).__plinthResponse !== true) {
    return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(value ?? null) };
  }
  const r = value as { status?: unknown; headers?: unknown; body?: unknown; bodyEncoding?: unknown };
  const status = typeof r.status === 'number' && Number.isInteger(r.status) && r.status >= 200 && r.status <= 599 ? r.status : 200;
  const headers: Record<string, string> = {};
  if (r.headers && typeof r.headers === 'object' && !Array.isArray(r.headers)) {
    for (const [k, v] of Object.entries(r.headers).slice(0, MAX_RESPONSE_HEADERS)) {
      const key = k.toLowerCase();
      if (!HEADER_NAME.test(k) || FORBIDDEN_HEADERS.has(key) || key.startsWith('access-control-')) continue;
      if (typeof v !== 'string' || /[\r\n\0]/.test(v) || v.length > 8192) continue;
      headers[key] = v;
    }
  }
  let body: string | Buffer;
  if (typeof r.body === 'string') {
    body = r.bodyEncoding === 'base64' ? Buffer.from(r.body, 'base64') : r.body;
    headers['content-type'] ??= r.bodyEncoding === 'base64' ? 'application/octet-stream' : 'text/plain; charset=utf-8';
  } else if (r.body === undefined || r.body === null) {
    body = '';
  } else {
    body = JSON.stringify(r.body);
    headers['content-type'] ??= 'application/json; charset=utf-8';
  }
  // A function's answer is the project's content on Plinth's origin: never sniffed into HTML.
  headers['x-content-type-options'] = 'nosniff';
  return { status, headers, body };
}

export async function runFromConsole(ctx: AppContext, projectId: string, name: string, event: unknown, as: 'anonymous' | 'service') {
  const fn = (await ctx.functions.registry.get(projectId)).byName.get(name);
  if (!fn) throw FunctionErrors.function_not_found();
  const caller: FunctionCaller = as === 'service' ? { keyKind: 'secret', userId: null } : { keyKind: 'publishable', userId: null };
  const outcome = await runFunction(ctx, { projectId, fn, trigger: 'run', event, caller });
  const common = { logs: outcome.logs, logsDropped: outcome.logsDropped, durationMs: outcome.wallMs, cpuMs: outcome.cpuMs };
  if (outcome.ok) return { ok: true, value: outcome.value, ...common };
  const error: AppError = failureError(outcome.failure, fn.kind === 'http' ? [400, 599] : [400, 499]);
  return { ok: false, error: { code: error.code, status: error.status, message: error.message }, ...common };
}
