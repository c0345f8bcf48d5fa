/** Shared by the data tests: create collections through the dashboard route, call the API. */
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';

export async function createCollection(env: TestEnv, p: TestProject, name: string, schema: unknown[] = [], rls?: Record<string, unknown>) {
  const res = await env.app.inject({
    method: 'POST',
    url: `/api/projects/${p.id}/collections`,
    headers: p.owner.auth,
    payload: { name, schema, ...(rls ? { rls } : {}) },
  });
  if (res.statusCode !== 201) throw new Error(`collection create failed: ${res.statusCode} ${res.body}`);
  return res.json().data as { _id: string; name: string };
}

type Headers = Record<string, string>;

export function api(env: TestEnv) {
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) => {
    const res = await env.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
    return { status: res.statusCode, body: res.body ? res.json() : undefined };
  };
  return {
    get: (url: string, h: Headers) => call('GET', url, h),
    post: (url: string, h: Headers, body: unknown) => call('POST', url, h, body),
    put: (url: string, h: Headers, body: unknown) => call('PUT', url, h, body),
    patch: (url: string, h: Headers, body: unknown) => call('PATCH', url, h, body),
    del: (url: string, h: Headers) => call('DELETE', url, h),
  };
}
