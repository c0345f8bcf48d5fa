/**
 * Shared by the backup tests: projects built through the HTTP API only (dashboard routes and the
 * public data, auth and storage routes), export/import calls, and a view of a project as the
 * API shows it, with ids replaced by labels so that a copy with new ids compares too.
 */
import type { TestEnv } from '../../helpers/context.js';
import type { TestOperator, TestProject } from '../../helpers/fixtures.js';

type Headers = Record<string, string>;

export async function call(env: TestEnv, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) {
  const res = await env.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const body = res.body ? res.json() : undefined;
  return { status: res.statusCode, body };
}

/** Calls that must succeed (a failing set-up step says which). */
export async function must(env: TestEnv, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) {
  const r = await call(env, method, url, headers, payload);
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** POST /api/projects, as the dashboard does. */
export async function apiProject(env: TestEnv, owner: TestOperator, name = 'Backup shape'): Promise<TestProject> {
  const body = await must(env, 'POST', '/api/projects', owner.auth, { name, siteUrl: 'http://localhost:5173' });
  const { _id, id, publishableKey, secretKey } = body.data;
  return { id: id ?? _id, publishableKey, secretKey, owner, pk: { 'x-api-key': publishableKey }, sk: { 'x-api-key': secretKey } };
}

export async function exportOf(env: TestEnv, p: TestProject): Promise<Buffer> {
  const res = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/export`, headers: p.owner.auth });
  if (res.statusCode !== 200) throw new Error(`export ${res.statusCode} ${res.body}`);
  return res.rawPayload;
}

export async function importInto(env: TestEnv, p: TestProject, body: Buffer, query = '') {
  const res = await env.app.inject({
    method: 'POST', url: `/api/projects/${p.id}/import${query}`, headers: { ...p.owner.auth, 'content-type': 'application/gzip' }, payload: body,
  });
  return { status: res.statusCode, body: res.json() };
}

/** Every page of a list route that answers `{items}` (or an array) with `page` and `limit`. */
async function allPages(env: TestEnv, url: string, headers: Headers): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for (let page = 1; ; page++) {
    const body = await must(env, 'GET', `${url}${url.includes('?') ? '&' : '?'}page=${page}&limit=100`, headers);
    const items = (Array.isArray(body.data) ? body.data : body.data.items) as Array<Record<string, unknown>>;
    out.push(...items);
    if (items.length < 100) return out;
  }
}

/**
 * The project as its owner and its API show it: collections (schema, RLS, indexes, search,
 * realtime), every document (soft-deleted ones included), end users, file records, and which
 * documents each end user sees with their own token (what owner ids decide).
 */
export async function view(env: TestEnv, p: TestProject, logins: Array<{ email: string; password: string }> = []) {
  const cols = (await must(env, 'GET', `/api/projects/${p.id}/collections`, p.owner.auth)).data as Array<Record<string, unknown>>;
  const collections = cols
    .map((c) => ({ name: c.name, model: c.model, rls: c.rls, indexes: c.indexes, searchLanguage: c.searchLanguage, realtime: c.realtime }))
    .sort((a, b) => String(a.name).localeCompare(String(b.name)));
  const docs: Record<string, unknown[]> = {};
  const seen: Record<string, Record<string, string[]>> = {};
  for (const c of collections) {
    if (String(c.name).toLowerCase() === 'users') continue;
    docs[String(c.name)] = await allPages(env, `/api/data/${String(c.name)}?include_deleted=true&sort=k`, p.sk);
  }
  const searched: Record<string, string[]> = {};
  for (const c of collections) {
    if (!(c.model as Array<{ searchable?: boolean }>).some((f) => f.searchable)) continue;
    const r = await must(env, 'GET', `/api/data/${String(c.name)}?search=running&sort=k`, p.sk);
    searched[String(c.name)] = (r.data.items as Array<{ k: string }>).map((d) => d.k);
  }
  const users = (await allPages(env, `/api/projects/${p.id}/users`, p.owner.auth)).sort((a, b) => String(a.email).localeCompare(String(b.email)));
  for (const u of logins) {
    const login = await must(env, 'POST', '/api/userAuth/login', { ...p.pk, 'x-refresh-token-mode': 'header' }, u);
    const as = { ...p.pk, authorization: `Bearer ${login.data.accessToken}` };
    seen[u.email] = {};
    for (const c of collections) {
      if (String(c.name).toLowerCase() === 'users') continue;
      const r = await call(env, 'GET', `/api/data/${String(c.name)}?sort=k&limit=100`, as);
      seen[u.email]![String(c.name)] = r.status === 200 ? (r.body.data.items as Array<{ k: string }>).map((d) => d.k) : [`status ${r.status}`];
    }
  }
  const files = (await allPages(env, `/api/projects/${p.id}/files`, p.owner.auth))
    .map((f) => ({ ...f, path: String(f.path).slice(String(f.path).indexOf('/') + 1), url: String(f.url).replace(p.id, '<project>') }))
    .sort((a, b) => String(a.path).localeCompare(String(b.path)));
  return { collections, docs, searched, users, files, seen };
}

export type ProjectView = Awaited<ReturnType<typeof view>>;

/**
 * The view with every document id replaced by `<collection>:<k>` and every user id by
 * `user:<email>`, wherever it appears (ids, owner fields, references, file owners): two views
 * are equal when the projects are the same up to their ids.
 */
export function labelled(v: ProjectView): unknown {
  const labels = new Map<string, string>();
  for (const [name, list] of Object.entries(v.docs)) for (const d of list as Array<{ _id: string; k: string }>) labels.set(d._id, `${name}:${d.k}`);
  for (const u of v.users as Array<{ _id: string; email: string }>) labels.set(u._id, `user:${u.email}`);
  const walk = (x: unknown): unknown => {
    if (typeof x === 'string') {
      let s = labels.get(x) ?? x;
      for (const [id, label] of labels) if (s.includes(id)) s = s.split(id).join(label);
      return s;
    }
    if (Array.isArray(x)) return x.map(walk);
    if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, val]) => [k, walk(val)]));
    return x;
  };
  return walk(v);
}

/** Every id (document and user) a view holds. */
export function idsOf(v: ProjectView): string[] {
  return [
    ...Object.values(v.docs).flatMap((l) => (l as Array<{ _id: string }>).map((d) => d._id)),
    ...(v.users as Array<{ _id: string }>).map((u) => u._id),
  ];
}
