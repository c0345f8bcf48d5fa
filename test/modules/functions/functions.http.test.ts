/**
 * HTTP functions end to end: deployed through the dashboard API (TypeScript compiled at deploy),
 * called at /api/functions/:name with a project's key, acting with the caller's identity and the
 * collections' access rules (or the service's, when asked), reading secrets as plinth.env; and
 * the threats: another project's key, a function reading a private document of another user,
 * credentials passed to the function, headers it may not set, fetch to loopback and metadata.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let other: TestProject;
const alice = objectId();
const bob = objectId();
let asAlice: Record<string, string>;
let asBob: Record<string, string>;

async function deploy(project: TestProject, body: Record<string, unknown>) {
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/functions`, headers: project.owner.auth, payload: body });
  return { status: res.statusCode, body: res.json() };
}
async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, headers: Record<string, string>, payload?: unknown) {
  const res = await env.app.inject({ method, url: `/api/functions/${path}`, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { status: res.statusCode, headers: res.headers, text: res.body, json: () => res.json() };
}

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  other = await makeProject(env.ctx);
  asAlice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  asBob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, bob)}` };
  await createCollection(env, p, 'notes', [
    { key: 'text', type: 'String' },
    { key: 'userId', type: 'String' },
  ], { enabled: true, mode: 'private', ownerField: 'userId' });
});
afterAll(() => env.close());

describe('deploy', () => {
  it('compiles TypeScript, keeps versions, rolls back', async () => {
    const v1 = await deploy(p, {
      name: 'hello',
      kind: 'http',
      language: 'ts',
      source: `export default async (req: { query: { name?: string } }) => ({ hello: req.query.name ?? 'world', v: 1 });`,
    });
    expect(v1.status).toBe(201);
    expect(v1.body.data).toMatchObject({ name: 'hello', kind: 'http', version: 1, versions: 1, language: 'ts' });
    expect((await call('GET', 'hello?name=Zoë 日本', p.pk)).json()).toEqual({ hello: 'Zoë 日本', v: 1 });

    const v2 = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/functions/hello`, headers: p.owner.auth, payload: { source: `export default () => ({ v: 2 })` } });
    expect(v2.json().data).toMatchObject({ version: 2, versions: 2 });
    expect((await call('GET', 'hello', p.pk)).json()).toEqual({ v: 2 });

    const back = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/functions/hello/rollback`, headers: p.owner.auth, payload: { version: 1 } });
    expect(back.json().data).toMatchObject({ version: 1, versions: 2 });
    expect((await call('GET', 'hello', p.pk)).json()).toMatchObject({ v: 1 });
  });

  it.each([
    ['a syntax error', `export default () => {`, /line 1/],
    ['an import', `import fs from 'node:fs'; export default () => fs`, /Could not resolve/],
    ['no default export', `export const handler = () => 1`, /default export/],
  ])('refuses %s with 400 function_compile_failed, and nothing is stored', async (_what, source, message) => {
    const res = await deploy(p, { name: 'broken', kind: 'http', source });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('function_compile_failed');
    expect(res.body.message).toMatch(message);
    expect((await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/functions/broken`, headers: p.owner.auth })).statusCode).toBe(404);
  });

  it('refuses a second function of the same name, a bad trigger, and a hook on a missing collection', async () => {
    expect((await deploy(p, { name: 'hello', kind: 'http', source: 'export default () => 1' })).status).toBe(409);
    expect((await deploy(p, { name: 'cron', kind: 'schedule', trigger: { cron: '61 * * * *' }, source: 'export default () => 1' })).body.code).toBe('function_trigger_invalid');
    expect((await deploy(p, { name: 'hook', kind: 'before', trigger: { collection: 'nope' }, source: 'export default () => 1' })).status).toBe(404);
  });

  it("another operator never sees or changes a project's functions", async () => {
    const res = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/functions`, headers: other.owner.auth });
    expect(res.statusCode).toBe(404);
  });
});

describe('calling', () => {
  it('passes method, sub-path, query, headers (never credentials) and JSON or text bodies', async () => {
    await deploy(p, { name: 'echo', kind: 'http', source: `export default (req) => req` });
    const json = await call('POST', 'echo/a/b?x=1', { ...asAlice, cookie: 'sid=secret', 'x-custom': 'yes' }, { n: 1, s: 'ünï' });
    expect(json.status).toBe(200);
    const seen = json.json();
    expect(seen).toMatchObject({ method: 'POST', path: '/a/b', query: { x: '1' }, body: { n: 1, s: 'ünï' } });
    expect(seen.headers['x-custom']).toBe('yes');
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers['x-api-key']).toBeUndefined();
    expect(seen.headers.cookie).toBeUndefined();
    const text = await env.app.inject({ method: 'PUT', url: '/api/functions/echo', headers: { ...p.pk, 'content-type': 'text/plain' }, payload: 'plain ✓' });
    expect(text.json()).toMatchObject({ body: 'plain ✓' });
    const bin = await env.app.inject({ method: 'PUT', url: '/api/functions/echo', headers: { ...p.pk, 'content-type': 'application/octet-stream' }, payload: Buffer.from([0, 1, 2, 255]) });
    expect(bin.json()).toMatchObject({ body: 'AAEC/w==', bodyEncoding: 'base64' });
  });

  it('sets its status and headers, but not cookies, CORS or framing', async () => {
    await deploy(p, {
      name: 'custom',
      kind: 'http',
      source: `export default (req, plinth) => plinth.response('<p>made</p>', { status: 201, headers: { 'content-type': 'text/html', 'x-made': 'yes', 'set-cookie': 'a=b', 'access-control-allow-origin': '*', 'content-length': '1' } })`,
    });
    const res = await call('GET', 'custom', p.pk);
    expect(res.status).toBe(201);
    expect(res.text).toBe('<p>made</p>');
    expect(res.headers['x-made']).toBe('yes');
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('needs an API key, and one project’s key never reaches another’s functions', async () => {
    expect((await call('GET', 'hello', {})).status).toBe(401);
    const res = await call('GET', 'hello', other.pk);
    expect(res.status).toBe(404);
    expect(res.json().code).toBe('function_not_found');
  });

  it('a thrown error with a status reaches the client in the envelope; any other failure is function_error', async () => {
    await deploy(p, {
      name: 'refuse',
      kind: 'http',
      source: `export default (req) => { if (req.query.kind === 'own') throw new PlinthError('Over your limit', { status: 402, code: 'over_limit' }); throw new Error('bug'); }`,
    });
    const own = await call('GET', 'refuse?kind=own', p.pk);
    expect(own.status).toBe(402);
    expect(own.json()).toMatchObject({ success: false, code: 'over_limit', message: 'Over your limit' });
    const bug = await call('GET', 'refuse', p.pk);
    expect(bug.status).toBe(502);
    expect(bug.json().code).toBe('function_error');
  });

  it('a memory bomb answers 502 function_memory_limit, the log records it with its output, and the next call works', async () => {
    await deploy(p, {
      name: 'bomb',
      kind: 'http',
      source: `export default (req) => { console.log('start', req.query.n); if (req.query.n === '1') { const a = []; for (;;) a.push(new Uint8Array(1 << 20)); } return 'fine'; }`,
    });
    const res = await call('GET', 'bomb?n=1', p.pk);
    expect(res.status).toBe(502);
    expect(res.json().code).toBe('function_memory_limit');
    expect((await call('GET', 'bomb?n=2', p.pk)).json()).toBe('fine');
    await env.ctx.functions.log.flush();
    const log = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/functions/bomb/invocations`, headers: p.owner.auth });
    const [latest, first] = log.json().data.invocations;
    expect(latest).toMatchObject({ ok: true, trigger: 'http', logs: [{ level: 'log', text: 'start 2' }] });
    expect(first).toMatchObject({ ok: false, errorCode: 'function_memory_limit', logs: [{ text: 'start 1' }] });
  });

  it("calls to plinth past the invocation's limit, uncaught, answer 429 function_host_calls_limit (not a bare function_error)", async () => {
    await deploy(p, {
      name: 'chatty',
      kind: 'http',
      source: `export default async (req, plinth) => { for (let i = 0; i < 1000; i++) await plinth.data.service.collection('notes').count(); return 'never'; }`,
    });
    const res = await call('GET', 'chatty', p.pk);
    expect(res.status, res.text).toBe(429);
    expect(res.json().code).toBe('function_host_calls_limit');
  });
});

describe('plinth.data acts as the caller, under the collection’s rules', () => {
  it('a user reads and writes only their own private notes; service mode sees all', async () => {
    await deploy(p, {
      name: 'notes',
      kind: 'http',
      source: `export default async (req, plinth) => {
        const notes = plinth.data.collection('notes');
        if (req.method === 'POST') return notes.create({ text: req.body.text });
        if (req.query.service) return (await plinth.data.service.collection('notes').list()).items.length;
        if (req.query.id) return notes.get(req.query.id);
        return (await notes.list()).items.map((n) => n.text);
      }`,
    });
    const a = await call('POST', 'notes', asAlice, { text: 'alice’s 日記' });
    expect(a.status).toBe(200);
    expect(a.json()).toMatchObject({ text: 'alice’s 日記', userId: alice });
    await call('POST', 'notes', asBob, { text: 'bob’s note' });
    expect((await call('GET', 'notes', asAlice)).json()).toEqual(['alice’s 日記']);
    expect((await call('GET', 'notes', asBob)).json()).toEqual(['bob’s note']);
    // Alice's note by id, asked for by Bob: the private collection hides it.
    const stolen = await call('GET', `notes?id=${a.json()._id}`, asBob);
    expect(stolen.status).toBe(404);
    expect(stolen.json().code).toBe('document_not_found');
    // Anonymous: private reads need a user.
    expect((await call('GET', 'notes', p.pk)).json().code).toBe('auth_required');
    expect((await call('GET', 'notes?service=1', p.pk)).json()).toBe(2);
  });

  it('reads its secrets as plinth.env; no route returns a secret value', async () => {
    const put = await env.app.inject({ method: 'PUT', url: `/api/projects/${p.id}/function-secrets/STRIPE_KEY`, headers: p.owner.auth, payload: { value: 'sk_live_ünï' } });
    expect(put.statusCode).toBe(200);
    await deploy(p, { name: 'secret', kind: 'http', source: `export default (req, plinth) => ({ key: plinth.env.STRIPE_KEY, names: Object.keys(plinth.env) })` });
    expect((await call('GET', 'secret', p.pk)).json()).toEqual({ key: 'sk_live_ünï', names: ['STRIPE_KEY'] });
    const list = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/function-secrets`, headers: p.owner.auth });
    expect(list.body).toContain('STRIPE_KEY');
    expect(list.body).not.toContain('sk_live');
    const row = await env.ctx.db.admin.selectFrom('function_secrets').select('value').executeTakeFirstOrThrow();
    expect(JSON.stringify(row.value)).not.toContain('sk_live');
    expect(env.logs.join('\n')).not.toContain('sk_live');
    // Another project's functions never see it.
    await deploy(other, { name: 'secret', kind: 'http', source: `export default (req, plinth) => Object.keys(plinth.env)` });
    expect((await call('GET', 'secret', other.pk)).json()).toEqual([]);
  });

  it.each([
    ['loopback', 'http://127.0.0.1:5432/'],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['a private address', 'https://10.0.0.1/'],
    ['IPv6 loopback', 'http://[::1]/'],
  ])('fetch to %s is refused', async (what, url) => {
    const name = `fetch-${what.toLowerCase().replace(/\W+/g, '-')}`;
    expect((await deploy(p, { name, kind: 'http', source: `export default async () => { try { await fetch(${JSON.stringify(url)}); return 'reached'; } catch (e) { return e.code; } }` })).status).toBe(201);
    const res = await call('GET', name, p.pk);
    expect(res.json()).toBe('function_fetch_failed');
  });
});

describe('the invocation log', () => {
  it('keeps the newest invocations up to the cap and within the retention', async () => {
    const { trimInvocations } = await import('../../../src/modules/functions/queries.js');
    await env.ctx.functions.log.flush();
    const fn = await env.ctx.db.admin.selectFrom('functions').select('id').where('project_id', '=', p.id).where('name', '=', 'hello').executeTakeFirstOrThrow();
    const rows = Array.from({ length: 150 }, (_, i) => ({
      project_id: p.id, function_id: fn.id, version: 1, trigger: 'http', ok: true, error_code: null, error: null, duration_ms: i, cpu_ms: 0, logs: [], logs_dropped: 0,
    }));
    await env.ctx.db.admin.insertInto('function_invocations').values(rows.map((r) => ({ ...r, logs: '[]' }))).execute();
    await env.ctx.db.admin.insertInto('function_invocations').values({ ...rows[0]!, logs: '[]', duration_ms: -1, at: new Date(Date.now() - 100 * 3600_000) }).execute();
    await trimInvocations(env.ctx.db.admin, 72, 100);
    const left = await env.ctx.db.admin.selectFrom('function_invocations').select(['duration_ms']).where('project_id', '=', p.id).execute();
    expect(left.length).toBeLessThanOrEqual(100);
    expect(left.some((r) => r.duration_ms === -1)).toBe(false);
    expect(left.some((r) => r.duration_ms === 149)).toBe(true);
  });

  it("a batch holding a row of a project deleted meanwhile still writes the other projects' rows, and deleting a project removes its log", async () => {
    await env.ctx.functions.log.flush();
    const gone = await makeProject(env.ctx);
    const fnId = objectId();
    const row = (projectId: string, text: string) => ({
      project_id: projectId, function_id: fnId, version: 1, trigger: 'http', ok: true, error_code: null, error: null,
      duration_ms: 1, cpu_ms: 0, logs: [{ level: 'log' as const, text, at: Date.now() }], logs_dropped: 0,
    });
    env.ctx.functions.log.record(row(gone.id, 'before deletion'));
    await env.ctx.functions.log.flush();
    // Buffered, then its project is deleted before the flush.
    env.ctx.functions.log.record(row(gone.id, 'buffered — ünïcödé 日本'));
    env.ctx.functions.log.record(row(other.id, 'a neighbour in the same batch'));
    const del = await env.app.inject({ method: 'DELETE', url: `/api/projects/${gone.id}`, headers: gone.owner.auth });
    expect(del.statusCode, del.body).toBeLessThan(300);
    expect(await env.ctx.db.admin.selectFrom('function_invocations').select('id').where('project_id', '=', gone.id).execute()).toHaveLength(0);
    await env.ctx.functions.log.flush();
    const neighbour = await env.ctx.db.admin.selectFrom('function_invocations').select(['logs']).where('project_id', '=', other.id).where('function_id', '=', fnId).execute();
    expect(neighbour.map((r) => (r.logs as Array<{ text: string }>)[0]!.text)).toEqual(['a neighbour in the same batch']);
    const late = await env.ctx.db.admin.selectFrom('function_invocations').select(['logs']).where('project_id', '=', gone.id).execute();
    expect(late.map((r) => (r.logs as Array<{ text: string }>)[0]!.text)).toEqual(['buffered — ünïcödé 日本']); // ages out with the retention
  });
});
