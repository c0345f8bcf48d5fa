/**
 * `@plinth/client/functions`: the place for server functions (issue 47). The functions module
 * has no HTTP route on this server version yet; when it lands, `invoke` follows its route and
 * its answer shape. Until then it calls `FUNCTIONS_PATH/<name>` and fails as any unknown route
 * does (404 `not_found`).
 */
import type { PlinthClient } from './index.js';
import type { SchemaMap, WriteOptions } from './data.js';

/** Provisional: set by the functions issue. */
export const FUNCTIONS_PATH = '/api/functions';

export class Functions {
  constructor(private readonly client: PlinthClient) {}

  /** Runs the function `name` with `payload`; answers its result. */
  invoke<R = unknown>(name: string, payload?: unknown, opts: WriteOptions = {}): Promise<R> {
    return this.client.request<R>({ method: 'POST', path: `${FUNCTIONS_PATH}/${encodeURIComponent(name)}`, body: payload ?? {}, idempotent: true, ...opts });
  }
}

export function functions<S extends SchemaMap>(client: PlinthClient<S>): Functions {
  return new Functions(client as unknown as PlinthClient);
}
