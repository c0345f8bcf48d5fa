/** The data API: create, read, list grammar, update merge, soft delete, restore, bulk. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;

const PRODUCTS = [
  { key: 'title', type: 'String', required: true },
  { key: 'price', type: 'Number' },
  { key: 'inStock', type: 'Boolean', default: true },
  { key: 'releasedAt', type: 'Date' },
  { key: 'category', type: 'String' },
  { key: 'maker', type: 'Ref', ref: 'makers' },
  { key: 'meta', type: 'Object', fields: [{ key: 'views', type: 'Number' }] },
];

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  await createCollection(env, p, 'makers', [{ key: 'name', type: 'String' }]);
  await createCollection(env, p, 'products', PRODUCTS);
  const docs = [];
  for (let i = 0; i < 30; i++) {
    docs.push({
      title: `  item ${i}  `,
      price: i * 10,
      category: i % 3 === 0 ? 'books' : 'toys',
      releasedAt: `2024-01-${String((i % 28) + 1).padStart(2, '0')}`,
      loose: i % 2 === 0 ? i : String(i),
      nested: { level: i },
    });
  }
  const bulk = await A.post('/api/data/products/bulk', p.sk, docs);
  expect(bulk.status).toBe(201);
  expect(bulk.body.data.insertedCount).toBe(30);
});
afterAll(() => env.close());

describe('create and get', () => {
  it('creates with system fields, trims strings, applies defaults, returns 201 with the bare document', async () => {
    const res = await A.post('/api/data/products', p.sk, { title: '  Lamp ', price: 12.5, extra: { any: 'thing' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'Lamp', price: 12.5, inStock: true, isDeleted: false, deletedAt: null, extra: { any: 'thing' } });
    expect(res.body._id).toMatch(/^[0-9a-f]{24}$/);
    expect(typeof res.body.createdAt).toBe('string');
    const got = await A.get(`/api/data/products/${res.body._id}`, p.pk);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ success: true, data: { _id: res.body._id, title: 'Lamp' } });
    // The create answers from the values it wrote, not from reading the row back: they must be the stored ones.
    expect(got.body.data).toEqual(res.body);
  });

  it('rejects schema violations with the field named', async () => {
    expect((await A.post('/api/data/products', p.sk, { price: 1 })).body.message).toBe("Field 'title' is required.");
    const r = await A.post('/api/data/products', p.sk, { title: 'x', price: '42' });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("Field 'price' must be a Number.");
    expect((await A.post('/api/data/products', p.sk, { title: 'x', maker: 'nope' })).body.message).toBe(
      "Field 'maker' must be a valid reference ID (ObjectId).",
    );
    expect((await A.post('/api/data/products', p.sk, { title: 'x', releasedAt: 'someday' })).status).toBe(400);
  });

  it('unknown collection 404, bad id 400, missing document 404', async () => {
    expect((await A.get('/api/data/nothing', p.sk)).status).toBe(404);
    expect((await A.get('/api/data/products/xyz', p.sk)).body.message).toBe('Invalid ID format.');
    expect((await A.get('/api/data/products/aaaaaaaaaaaaaaaaaaaaaaaa', p.sk)).body.message).toBe('Document not found.');
  });
});

describe('list grammar', () => {
  const items = async (qs: string) => {
    const r = await A.get(`/api/data/products?${qs}`, p.pk);
    expect(r.status, r.body?.message).toBe(200);
    return r.body.data;
  };

  it('pages with page/limit (default 20), total and skip', async () => {
    const d = await items('category=toys');
    expect(d.items.length).toBe(20);
    expect(d).toMatchObject({ total: 20, page: 1, limit: 20 });
    const d2 = await items('category=toys&limit=5&page=4');
    expect(d2.items.length).toBe(5);
    expect((await items('category=toys&limit=500')).limit).toBe(100);
    const s = await items('category=toys&sort=price&skip=18');
    expect(s.items.map((x: { price: number }) => x.price)).toEqual([280, 290]);
    expect(s.total).toBe(20); // counted over the whole filtered set, not the page
    const past = await items('category=toys&limit=10&page=9');
    expect(past).toMatchObject({ items: [], total: null, page: 9 }); // past the end: the page cannot tell
    expect(await items('category=toys&limit=10&page=9&include_total=true')).toMatchObject({ items: [], total: 20 });
    expect(Object.keys(d.items[0])).not.toContain('total');
  });

  it('counts every match for total only when asked: a full page with more after it answers total null', async () => {
    const more = await items('category=toys&limit=5');
    expect(more).toMatchObject({ total: null, page: 1, limit: 5 });
    expect(more.items).toHaveLength(5);
    const asked = await items('category=toys&limit=5&include_total=true');
    expect(asked).toMatchObject({ total: 20, page: 1, limit: 5 });
    expect(asked.items.map((x: { _id: string }) => x._id)).toEqual(more.items.map((x: { _id: string }) => x._id));
    expect((await items('category=toys&limit=5&page=4')).total).toBe(20); // the last page shows it
    expect((await items('include_total=true&category=nothing')).total).toBe(0);
  });

  it('filters ranges typed by the schema, and sorts both ways', async () => {
    const d = await items('price_gte=100&price_lt=150&sort=-price');
    expect(d.items.map((x: { price: number }) => x.price)).toEqual([140, 130, 120, 110, 100]);
    const asc = await items('price_gt=250&sort=price:asc');
    expect(asc.items.map((x: { price: number }) => x.price)).toEqual([260, 270, 280, 290]);
    expect((await items('price_in=10,20,999')).total).toBe(2);
    expect((await items('price_ne=0&category=books')).total).toBe(9);
    expect((await items('releasedAt_gte=2024-01-27')).total).toBe(2);
  });

  it('undeclared fields compare numbers and strings sensibly; dotted paths work', async () => {
    expect((await items('loose=4')).total).toBe(1);
    expect((await items('loose=5')).total).toBe(1);
    expect((await items('loose_gte=26')).total).toBe(2); // stored numbers 26, 28 (odd ones are strings)
    expect((await items('nested.level_lt=3')).total).toBe(3);
    expect((await items('nested.level=7')).total).toBe(1);
    expect((await items('nowhere=1')).total).toBe(0);
  });

  it('_exists, _regex, count=true, fields projection', async () => {
    expect((await items('releasedAt_exists=true&include_total=true')).total).toBe(30);
    expect((await items('maker_exists=false&price_lt=12')).total).toBe(2);
    expect((await items('title_regex=^ITEM 1')).total).toBe(11);
    const c = await A.get('/api/data/products?count=true&category=books', p.pk);
    expect(c.body).toEqual({ success: true, data: { count: 10 }, message: 'Count fetched successfully.' });
    const f = await items('fields=title,nested.level&limit=1&sort=price');
    expect(f.items[0]).toEqual({ _id: expect.any(String), title: 'item 0', nested: { level: 0 } });
  });

  it('keyset cursor pages through everything without overlap', async () => {
    const seen: string[] = [];
    let cursor = '';
    for (let i = 0; i < 10; i++) {
      const d = await items(`category=toys&limit=7&sort=price:desc&cursor=${cursor}`);
      expect(d.total).toBeNull(); // a cursor page never counts unless asked
      seen.push(...d.items.map((x: { _id: string }) => x._id));
      if (!d.nextCursor) break;
      cursor = d.nextCursor;
    }
    expect(seen.length).toBe(20);
    expect(new Set(seen).size).toBe(20);
    expect((await items(`category=toys&limit=7&sort=price:desc&cursor=${cursor}&include_total=true`)).total).toBe(20);
  });

  it('bad query input is 400', async () => {
    expect((await A.get('/api/data/products?price_gt=abc', p.pk)).status).toBe(400);
    expect((await A.get('/api/data/products?x_exists=maybe', p.pk)).body.message).toBe('Invalid value for "x_exists"; expected "true" or "false".');
    expect((await A.get(`/api/data/products?x_regex=${'a'.repeat(129)}`, p.pk)).body.message).toMatch(/exceeds 128/);
    expect((await A.get('/api/data/products?x_regex=(a', p.pk)).body.message).toBe('Invalid regex pattern for "x_regex".');
    expect((await A.get('/api/data/products?sort=price:sideways', p.pk)).status).toBe(400);
  });
});

describe('update, delete, restore', () => {
  it('PUT and PATCH merge; dot notation touches only the inner key', async () => {
    const c = await A.post('/api/data/products', p.sk, { title: 'Desk', price: 5, meta: { views: 1 }, deep: { a: 1, b: 2 } });
    const id = c.body._id;
    const u = await A.put(`/api/data/products/${id}`, p.sk, { price: 6 });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ success: true, message: 'Updated', data: { title: 'Desk', price: 6 } });
    const d = await A.patch(`/api/data/products/${id}`, p.sk, { 'deep.a': 9, 'meta.views': 2 });
    expect(d.body.data.deep).toEqual({ a: 9, b: 2 });
    expect(d.body.data.meta).toEqual({ views: 2 });
    expect((await A.patch(`/api/data/products/${id}`, p.sk, { 'title.x': 1 })).status).toBe(400);
    expect((await A.patch(`/api/data/products/${id}`, p.sk, { price: 'cheap' })).body.message).toBe("Field 'price' must be a Number.");
  });

  it('a top-level update answers the document exactly as stored (id, timestamps, live)', async () => {
    const c = await A.post('/api/data/products', p.sk, { title: 'Lamp', price: 3 });
    const u = await A.patch(`/api/data/products/${c.body._id}`, p.sk, { price: 4 });
    expect(u.status).toBe(200);
    const stored = await A.get(`/api/data/products/${c.body._id}`, p.sk);
    expect(u.body.data).toEqual(stored.body.data);
    expect(u.body.data).toMatchObject({ _id: c.body._id, price: 4, createdAt: c.body.createdAt, isDeleted: false, deletedAt: null });
    expect(Date.parse(u.body.data.updatedAt)).toBeGreaterThanOrEqual(Date.parse(c.body.updatedAt));
  });

  it('soft delete hides, include_deleted shows, restore brings back, hard delete purges (secret key)', async () => {
    const c = await A.post('/api/data/products', p.sk, { title: 'Temp' });
    const id = c.body._id;
    const del = await A.del(`/api/data/products/${id}`, p.sk);
    expect(del.body).toEqual({ success: true, data: { id, message: 'Document deleted' }, message: 'Document deleted' });
    expect((await A.get(`/api/data/products/${id}`, p.sk)).status).toBe(404);
    const inc = await A.get(`/api/data/products/${id}?include_deleted=true`, p.sk);
    expect(inc.body.data).toMatchObject({ isDeleted: true, deletedAt: expect.any(String) });
    expect((await A.get('/api/data/products?title=Temp', p.sk)).body.data.total).toBe(0);
    expect((await A.get('/api/data/products?title=Temp&include_deleted=true', p.sk)).body.data.total).toBe(1);
    const r = await A.post(`/api/data/products/${id}/restore`, p.sk, {});
    expect(r.body.data).toMatchObject({ isDeleted: false, deletedAt: null });
    expect((await A.post(`/api/data/products/${id}/restore`, p.sk, {})).body.data).toMatchObject({ _id: id, isDeleted: false });
    await A.del(`/api/data/products/${id}`, p.sk);
    expect((await A.del(`/api/data/products/${id}`, p.sk)).status).toBe(404);
    const hard = await A.del(`/api/data/products/${id}?hard=true`, p.sk);
    expect(hard.status).toBe(200);
    const rows = await env.ctx.db.admin.selectFrom('documents').select('id').where('id', '=', id).execute();
    expect(rows).toEqual([]);
    expect((await A.del(`/api/data/products/${id}?hard=true`, p.sk)).status).toBe(404);
    expect((await A.post(`/api/data/products/${id}/restore`, p.sk, {})).status).toBe(404);
  });

  it('bulk is all-or-nothing with 1-100 items', async () => {
    const before = (await A.get('/api/data/products?count=true', p.sk)).body.data.count;
    const bad = await A.post('/api/data/products/bulk', p.sk, [{ title: 'ok' }, { price: 1 }]);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^Invalid records at index: 1/);
    expect((await A.post('/api/data/products/bulk', p.sk, [])).status).toBe(400);
    expect((await A.post('/api/data/products/bulk', p.sk, Array.from({ length: 101 }, () => ({ title: 'x' })))).status).toBe(400);
    expect((await A.get('/api/data/products?count=true', p.sk)).body.data.count).toBe(before);
  });

  it('populate resolves Ref fields', async () => {
    const m = await A.post('/api/data/makers', p.sk, { name: 'Acme' });
    const c = await A.post('/api/data/products', p.sk, { title: 'Anvil', maker: m.body._id });
    const got = await A.get(`/api/data/products/${c.body._id}?populate=maker`, p.sk);
    expect(got.body.data.maker).toMatchObject({ _id: m.body._id, name: 'Acme' });
    const list = await A.get('/api/data/products?title=Anvil&expand=maker', p.sk);
    expect(list.body.data.items[0].maker.name).toBe('Acme');
  });
});
