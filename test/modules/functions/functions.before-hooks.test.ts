/**
 * Before-hooks in every write path: they change what a create or an update stores, refuse a
 * write with their own status and code, run the same for single writes, bulk, batch, the
 * operator's writes and imports (which may opt out), and fail closed. The threats: a hook that
 * writes into its own collection (recursion), a hook that loops, data a hook makes that the
 * schema refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let asAlice: Record<string, string>;
const alice = objectId();

async function deploy(body: Record<string, unknown>) {
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/functions`, headers: p.owner.auth, payload: body });
  if (res.statusCode !== 201) throw new Error(`deploy failed: ${res.body}`);
}
async function inject(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) {
  const res = await env.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { status: res.statusCode, body: res.json() };
}

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  asAlice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  await createCollection(env, p, 'posts', [
    { key: 'title', type: 'String', required: true },
    { key: 'slug', type: 'String' },
    { key: 'userId', type: 'String' },
    { key: 'price', type: 'Number' },
  ], { enabled: true, mode: 'public-read', ownerField: 'userId' });
  await createCollection(env, p, 'plain', [{ key: 'n', type: 'Number' }]);
  await deploy({
    name: 'slugify',
    kind: 'before',
    trigger: { collection: 'posts', events: ['create', 'update'] },
    language: 'ts',
    source: `
      type Event = { operation: string; data: { title?: string; price?: number; slug?: string }; user: { id: string } | null };
      export default async (event: Event) => {
        const data = { ...event.data };
        if ((data.price ?? 0) > 1000) throw new PlinthError('Orders over 1000 need approval', { status: 422, code: 'order_over_limit' });
        if (data.title !== undefined) data.slug = data.title.normalize('NFKD').replace(/[\\u0300-\\u036f]/g, '').toLowerCase().replace(/[^a-z0-9\\u3040-\\u30ff\\u4e00-\\u9fff]+/g, '-').replace(/^-|-$/g, '');
        if (data.title === 'bad schema') return { data: { ...data, price: 'not a number' } };
        return { data };
      };`,
  });
  await deploy({
    name: 'guard-delete',
    kind: 'before',
    trigger: { collection: 'posts', events: ['delete'] },
    source: `export default (event) => { if (event.user === null) throw new PlinthError('Only signed-in users delete', { status: 403, code: 'delete_refused' }); }`,
  });
});
afterAll(() => env.close());

describe('what a before-hook does to a write', () => {
  it('makes the slug of a create and of an update, with non-ASCII titles', async () => {
    const created = await inject('POST', '/api/data/posts', asAlice, { title: 'Héllo Wörld 日本' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: 'Héllo Wörld 日本', slug: 'hello-world-日本', userId: alice });
    const updated = await inject('PUT', `/api/data/posts/${created.body._id}`, asAlice, { title: 'Second Title' });
    expect(updated.status).toBe(200);
    const stored = await inject('GET', `/api/data/posts/${created.body._id}`, p.pk);
    expect(stored.body.data).toMatchObject({ slug: 'second-title' });
  });

  it('refuses with its own status, code and message, and nothing is stored', async () => {
    const res = await inject('POST', '/api/data/posts', asAlice, { title: 'Expensive', price: 5000 });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ success: false, code: 'order_over_limit', message: 'Orders over 1000 need approval' });
    const list = await inject('GET', '/api/data/posts?title=Expensive', p.pk);
    expect(list.body.data.items).toEqual([]);
  });

  it('what it returns is validated by the schema like client data', async () => {
    const res = await inject('POST', '/api/data/posts', asAlice, { title: 'bad schema' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('document_invalid');
  });

  it('a delete hook refuses deletes by anonymous callers but not by the secret key... which is anonymous too', async () => {
    const created = await inject('POST', '/api/data/posts', asAlice, { title: 'to delete' });
    const refused = await inject('DELETE', `/api/data/posts/${created.body._id}`, p.sk);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('delete_refused');
    expect((await inject('DELETE', `/api/data/posts/${created.body._id}`, asAlice)).status).toBe(200);
  });

  it('collections without hooks write as before', async () => {
    const res = await inject('POST', '/api/data/plain', p.sk, { n: 1 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ n: 1 });
  });
});

describe('the same hooks on every write path', () => {
  it('bulk create', async () => {
    const res = await inject('POST', '/api/data/posts/bulk', asAlice, [{ title: 'Bulk One' }, { title: 'Bulk Two' }]);
    expect(res.status).toBe(201);
    const list = await inject('GET', '/api/data/posts?sort=title&title_regex=^Bulk', p.pk);
    expect(list.body.data.items.map((d: { slug: string }) => d.slug)).toEqual(['bulk-one', 'bulk-two']);
    const refused = await inject('POST', '/api/data/posts/bulk', asAlice, [{ title: 'Fine' }, { title: 'Pricey', price: 2000 }]);
    expect(refused.status).toBe(422);
    expect((await inject('GET', '/api/data/posts?title=Fine', p.pk)).body.data.items).toEqual([]);
  });

  it('an atomic batch, naming the refused operation', async () => {
    const ok = await inject('POST', '/api/data/batch', asAlice, { operations: [{ op: 'create', collection: 'posts', data: { title: 'In Batch' } }] });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.body.data)).toContain('"slug":"in-batch"');
    const refused = await inject('POST', '/api/data/batch', asAlice, {
      operations: [
        { op: 'create', collection: 'posts', data: { title: 'Batch Fine' } },
        { op: 'create', collection: 'posts', data: { title: 'Batch Pricey', price: 9999 } },
      ],
    });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(/^Operation 1 \(create posts\)/);
    expect((await inject('GET', '/api/data/posts?title=Batch Fine', p.pk)).body.data.items).toEqual([]);
  });

  it('the operator’s writes from the console', async () => {
    const res = await inject('POST', `/api/projects/${p.id}/data/posts`, p.owner.auth, { title: 'From Console', userId: alice });
    expect(res.status).toBe(201);
    expect(JSON.stringify(res.body)).toContain('"slug":"from-console"');
  });

  it('imports, unless the import opts out', async () => {
    const hooked = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/data/posts/import`, headers: p.owner.auth, payload: [{ title: 'Imported Row', userId: alice }] });
    expect(hooked.json().data).toMatchObject({ inserted: 1 });
    expect((await inject('GET', '/api/data/posts?title=Imported Row', p.pk)).body.data.items[0]).toMatchObject({ slug: 'imported-row' });
    const raw = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/data/posts/import?hooks=false`, headers: p.owner.auth, payload: [{ title: 'Raw Row', userId: alice }] });
    expect(raw.json().data).toMatchObject({ inserted: 1 });
    const row = (await inject('GET', '/api/data/posts?title=Raw Row', p.pk)).body.data.items[0];
    expect(row.slug).toBeUndefined();
  });
});

describe('hostile hooks', () => {
  it('a hook that writes into its own collection stops at two levels with function_recursion_limit', async () => {
    await createCollection(env, p, 'echoes', [{ key: 'n', type: 'Number' }]);
    await deploy({
      name: 'echo-forever',
      kind: 'before',
      trigger: { collection: 'echoes', events: ['create'] },
      source: `export default async (event, plinth) => { await plinth.data.service.collection('echoes').create({ n: (event.data.n ?? 0) + 1 }); }`,
    });
    const res = await inject('POST', '/api/data/echoes', p.sk, { n: 0 });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('function_recursion_limit');
    const rows = await env.ctx.db.admin.selectFrom('documents').select('id').where('project_id', '=', p.id).where('collection_id', '=', (await env.ctx.collections.get(p.id, 'echoes'))!.id).execute();
    expect(rows).toEqual([]);
  });

  it('a hook that loops fails the write within its CPU time (function_cpu_limit), and nothing is stored', async () => {
    await createCollection(env, p, 'spins', [{ key: 'n', type: 'Number' }]);
    await deploy({ name: 'spin', kind: 'before', trigger: { collection: 'spins', events: ['create'] }, source: `export default () => { for (;;) {} }` });
    const res = await inject('POST', '/api/data/spins', p.sk, { n: 1 });
    expect(res.status).toBe(504);
    expect(res.body.code).toBe('function_cpu_limit');
  });

  it('a hook whose code throws an ordinary error refuses the write (fail closed) with function_error', async () => {
    await createCollection(env, p, 'buggy', [{ key: 'n', type: 'Number' }]);
    await deploy({ name: 'buggy', kind: 'before', trigger: { collection: 'buggy', events: ['create'] }, source: `export default (e) => e.data.missing.field` });
    const res = await inject('POST', '/api/data/buggy', p.sk, { n: 1 });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('function_error');
  });

  it('a disabled hook does not run', async () => {
    await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/functions/buggy`, headers: p.owner.auth, payload: { enabled: false } });
    expect((await inject('POST', '/api/data/buggy', p.sk, { n: 2 })).status).toBe(201);
  });
});
