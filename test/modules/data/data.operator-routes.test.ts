/**
 * The dashboard's data routes (/api/projects/:projectId/data/:collection…): the owner
 * operator's session, the public grammar, the same writes, cursor pages without a total,
 * bulk actions, streamed export and import with per-row errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
let base: string;

const SCHEMA = [
  { key: 'title', type: 'String', required: true },
  { key: 'price', type: 'Number' },
  { key: 'sku', type: 'String', unique: true },
  { key: 'inStock', type: 'Boolean' },
  { key: 'tags', type: 'Array', items: { type: 'String' } },
];

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  await createCollection(env, p, 'products', SCHEMA);
  base = `/api/projects/${p.id}/data/products`;
  const docs = Array.from({ length: 45 }, (_, i) => ({ title: `item ${i}`, price: i, sku: `S${i}` }));
  for (let i = 0; i < docs.length; i += 20) expect((await A.post(`${base}/bulk`, p.owner.auth, docs.slice(i, i + 20))).status).toBe(201);
});
afterAll(() => env.close());

describe('reads', () => {
  it('lists with the public grammar; cursor pages carry total null and walk every match', async () => {
    const seen = new Set<string>();
    let cursor = '';
    for (let i = 0; i < 10; i++) {
      const r = await A.get(`${base}?price_gte=10&limit=10&sort=price:asc&cursor=${cursor}`, p.owner.auth);
      expect(r.status).toBe(200);
      expect(r.body.data.total).toBeNull();
      for (const d of r.body.data.items) seen.add(d._id);
      if (!r.body.data.nextCursor) break;
      cursor = r.body.data.nextCursor;
    }
    expect(seen.size).toBe(35);
    const count = await A.get(`${base}?price_gte=10&count=true`, p.owner.auth);
    expect(count.body.data).toEqual({ count: 35 });
    const offset = await A.get(`${base}?price_lt=5&sort=-price`, p.owner.auth);
    expect(offset.body.data.total).toBe(5);
    expect(offset.body.data.items.map((d: { price: number }) => d.price)).toEqual([4, 3, 2, 1, 0]);
  });

  it('rejects what the public API rejects, with the same messages', async () => {
    const r = await A.get(`${base}?price_gt=abc`, p.owner.auth);
    const pub = await A.get(`/api/data/products?price_gt=abc`, p.sk);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(pub.body.message);
    expect((await A.get(`${base}/nothex`, p.owner.auth)).status).toBe(400);
    expect((await A.get(`/api/projects/${p.id}/data/nope`, p.owner.auth)).status).toBe(404);
    expect((await A.get(`/api/projects/${p.id}/data/users`, p.owner.auth)).status).toBe(403);
  });
});

describe('writes', () => {
  it('creates, updates, soft-deletes, restores and hard-deletes, charging and refunding bytes', async () => {
    const created = await A.post(base, p.owner.auth, { title: 'Lamp', price: 12, sku: 'L1' });
    expect(created.status).toBe(201);
    const id = created.body.data._id;
    const upd = await A.patch(`${base}/${id}`, p.owner.auth, { price: 13, 'meta.views': 2 });
    expect(upd.body.data).toMatchObject({ price: 13, meta: { views: 2 } });
    expect((await A.del(`${base}/${id}`, p.owner.auth)).status).toBe(200);
    expect((await A.get(`${base}/${id}`, p.owner.auth)).status).toBe(404);
    expect((await A.get(`${base}/${id}?include_deleted=true`, p.owner.auth)).body.data.isDeleted).toBe(true);
    expect((await A.post(`${base}/${id}/restore`, p.owner.auth, {})).body.data.isDeleted).toBe(false);
    const before = await usedBytes();
    expect((await A.del(`${base}/${id}?hard=true`, p.owner.auth)).status).toBe(200);
    expect(await usedBytes()).toBeLessThan(before);
    expect((await A.get(`${base}/${id}?include_deleted=true`, p.owner.auth)).status).toBe(404);
  });

  it('validates against the schema like the public API', async () => {
    const r = await A.post(base, p.owner.auth, { price: 1 });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("Field 'title' is required.");
    expect((await A.post(base, p.owner.auth, { title: 'dup', sku: 'S1' })).status).toBe(409);
  });

  it('bulk-deletes and restores selected ids with a result per id', async () => {
    const list = await A.get(`${base}?price_lt=3`, p.owner.auth);
    const ids = list.body.data.items.map((d: { _id: string }) => d._id);
    const missing = 'aaaaaaaaaaaaaaaaaaaaaaaa';
    const del = await A.post(`${base}/bulk-delete`, p.owner.auth, { ids: [...ids, missing] });
    expect(del.status).toBe(200);
    expect(del.body.data.done.sort()).toEqual([...ids].sort());
    expect(del.body.data.failed).toEqual([{ id: missing, code: 'document_not_found', message: 'Document not found.' }]);
    expect((await A.get(`${base}?price_lt=3&count=true`, p.owner.auth)).body.data.count).toBe(0);
    const back = await A.post(`${base}/bulk-restore`, p.owner.auth, { ids });
    expect(back.body.data.done).toHaveLength(3);
    expect((await A.get(`${base}?price_lt=3&count=true`, p.owner.auth)).body.data.count).toBe(3);
    expect((await A.post(`${base}/bulk-delete`, p.owner.auth, { ids: [] })).status).toBe(400);
  });
});

describe('export', () => {
  it('streams the filtered documents as NDJSON and as JSON', async () => {
    const nd = await env.app.inject({ method: 'GET', url: `${base}/export/ndjson?price_gte=40`, headers: p.owner.auth });
    expect(nd.statusCode).toBe(200);
    expect(nd.headers['content-type']).toContain('application/x-ndjson');
    expect(nd.headers['content-disposition']).toBe('attachment; filename="products.ndjson"');
    const lines = nd.body.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((d) => d.price).sort((a, b) => a - b)).toEqual([40, 41, 42, 43, 44]);
    const js = await env.app.inject({ method: 'GET', url: `${base}/export/json?price_gte=40`, headers: p.owner.auth });
    expect(JSON.parse(js.body)).toHaveLength(5);
    const none = await env.app.inject({ method: 'GET', url: `${base}/export/json?price_gte=4000`, headers: p.owner.auth });
    expect(JSON.parse(none.body)).toEqual([]);
  });

  it('walks more than one page and answers a bad filter with a 400 before streaming', async () => {
    const big = Array.from({ length: 100 }, (_, i) => ({ title: `bulk ${i}`, price: 1000 + i }));
    for (let i = 0; i < 6; i++) await A.post(`${base}/bulk`, p.owner.auth, big.map((d) => ({ ...d, title: `${d.title}/${i}` })));
    const all = await env.app.inject({ method: 'GET', url: `${base}/export/ndjson?price_gte=1000`, headers: p.owner.auth });
    const ids = all.body.trim().split('\n').map((l) => JSON.parse(l)._id);
    expect(new Set(ids).size).toBe(600);
    const bad = await env.app.inject({ method: 'GET', url: `${base}/export/ndjson?price_gt=abc`, headers: p.owner.auth });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_query');
  });
});

describe('import', () => {
  const post = (body: string, type: string) =>
    env.app.inject({ method: 'POST', url: `${base}/import`, headers: { ...p.owner.auth, 'content-type': type }, payload: body });

  it('imports CSV with typed cells and reports each refused row', async () => {
    const csv = 'title,price,inStock,tags,sku\nCsv A,5,true,"[""a"",""b""]",C1\n,6,false,,C2\nCsv C,seven,,,C3\nCsv D,8,no,,S1\n';
    const r = await post(csv, 'text/csv');
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toMatchObject({ total: 4, inserted: 1, failed: 3 });
    const errors = r.json().data.errors;
    expect(errors.map((e: { row: number }) => e.row)).toEqual([2, 3, 4]);
    expect(errors[0].message).toBe("Field 'title' is required.");
    expect(errors[1].message).toBe("Field 'price' must be a Number.");
    expect(errors[2].message).toMatch(/Duplicate/i);
    const got = await A.get(`${base}?sku=C1`, p.owner.auth);
    expect(got.body.data.items[0]).toMatchObject({ title: 'Csv A', price: 5, inStock: true, tags: ['a', 'b'] });
  });

  it('imports NDJSON and JSON arrays; broken lines are errors, not a failed import', async () => {
    const nd = await post('{"title":"Nd 1"}\nnot json\n\n{"title":"Nd 2","price":2}\n[1]\n', 'application/x-ndjson');
    expect(nd.json().data).toMatchObject({ total: 4, inserted: 2, failed: 2 });
    expect(nd.json().data.errors).toEqual([
      { row: 2, message: 'Invalid JSON on this line.' },
      { row: 4, message: 'Each record must be a JSON object.' },
    ]);
    const js = await env.app.inject({ method: 'POST', url: `${base}/import`, headers: p.owner.auth, payload: [{ title: 'J1' }, { title: 'J2' }] });
    expect(js.json().data).toMatchObject({ total: 2, inserted: 2, failed: 0, errors: [] });
    expect((await post('title\n"unterminated', 'text/csv')).statusCode).toBe(400);
    const wrongType = await env.app.inject({ method: 'POST', url: `${base}/import`, headers: { ...p.owner.auth, 'content-type': 'text/plain' }, payload: 'x' });
    expect(wrongType.statusCode).toBe(415);
  });
});

async function usedBytes(): Promise<number> {
  const r = await A.get(`/api/projects/${p.id}`, p.owner.auth);
  return r.body.data.databaseUsed;
}
