/**
 * `@plinth/client/functions`: a project's HTTP functions (the server's docs/functions.md), at
 * `/api/functions/:name` with the project's key and the signed-in user's token (the function
 * acts as that user). A function answers what it wants: JSON comes back parsed, anything else as
 * text; its own errors (and Plinth's, such as `function_cpu_limit`) come as PlinthError with the
 * envelope's code. Calls are not retried unless `retries` is given: a function is the app's own
 * code, and only the app knows whether running it twice is safe.
 */
import type { PlinthClient } from './index.js';
import type { SchemaMap } from './data.js';
import { errorOf } from './errors.js';
import { readBody, type QueryInit } from './core.js';

export const FUNCTIONS_PATH = '/api/functions';

export interface InvokeOptions {
  /** Default POST (GET when no body is given and no method is named). */
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A path below the function, e.g. `/orders/42` (the function reads it as `req.path`). */
  path?: string;
  query?: QueryInit;
  headers?: Record<string, string>;
  /** Attempts after the first on a network error or a 502/503/504 (each with the same Idempotency-Key). */
  retries?: number;
  signal?: AbortSignal;
}

export class Functions {
  constructor(private readonly client: PlinthClient) {}

  /** Calls the function `name` with `body` (JSON); answers what it returned. */
  async invoke<R = unknown>(name: string, body?: unknown, opts: InvokeOptions = {}): Promise<R> {
    const method = opts.method ?? (body === undefined ? 'GET' : 'POST');
    const sub = opts.path ? `/${opts.path.replace(/^\/+/, '')}` : '';
    const res = await this.client.transport.send({
      method,
      path: `${FUNCTIONS_PATH}/${encodeURIComponent(name)}${sub}`,
      query: opts.query,
      headers: opts.headers,
      body,
      retries: opts.retries ?? 0,
      idempotent: (opts.retries ?? 0) > 0,
      signal: opts.signal,
    });
    const answer = await readBody(res);
    if (!res.ok) throw errorOf(res, answer);
    return answer as R;
  }
}

export function functions<S extends SchemaMap>(client: PlinthClient<S>): Functions {
  return new Functions(client as unknown as PlinthClient);
}
