/**
 * Aggregation: every aggregate and group-by over real documents, the list's filters, bad input
 * as 400 with the reason, and the 1 000-group cap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;

const orders = [
  { status: 'paid', price: 10, paid: true, category: 'a', at: '2026-01-05T10:00:00.000Z', ref: '65a000000000000000000001' },
  { status: 'paid', price: 30, paid: true, category: 'b', at: '2026-01-20T10:00:00.000Z', ref: '65a000000000000000000001' },
  { status: 'paid', price: 20, paid: true, category: 'a', at: '2026-02-01T00:00:00.000Z', ref: '65a000000000000000000002' },
  { status: 'open', price: 5, paid: false, category: 'a', at: '2026-02-10T00:00:00.000Z', ref: '65a000000000000000000002' },
  { status: 'open', price: 7.5, paid: false, category: 'c', at: '2026-03-01T00:00:00.000Z' },
  { status: 'void', paid: false, at: '2026-03-02T00:00:00.000Z' },
];

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  await createCollection(env, p, 'orders', [
    { key: 'status', type: 'String' },
    { key: 'price', type: 'Number' },
    { key: 'paid', type: 'Boolean' },
    { key: 'category', type: 'String' },
    { key: 'at', type: 'Date' },
    { key: 'ref', type: 'Ref', ref: 'orders' },
    { key: 'meta', type: 'Object', fields: [{ key: 'n', type: 'Number' }] },
  ]);
  const r = await A.post('/api/data/orders/bulk', p.sk, orders);
  expect(r.status).toBe(201);
});
afterAll(() => env.close());

const agg = async (qs: string, headers = p.sk) => A.get(`/api/data/orders/aggregate?${qs}`, headers);

describe('aggregates without groups', () => {
  it('count by default (only when no other aggregate is asked), over live documents', async () => {
    const r = await agg('');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, data: { groups: [{ key: {}, count: 6 }], truncated: false } });
  });

  it('sum, avg, min, max, countDistinct in one call (missing values ignored)', async () => {
    const r = await agg('count&sum=price&avg=price&min=price,at,status&max=price,createdAt');
    expect(r.status).toBe(200);
    const [g] = r.body.data.groups;
    expect(g.count).toBe(6);
    expect(g.sum).toEqual({ price: 72.5 });
    expect(g.avg.price).toBeCloseTo(14.5);
    expect(g.min).toEqual({ price: 5, at: '2026-01-05T10:00:00.000Z', status: 'open' });
    expect(g.max.price).toBe(30);
    expect(Date.parse(g.max.createdAt)).toBeGreaterThan(0);
    const distinct = await agg('countDistinct=category,ref,status');
    expect(distinct.body.data.groups[0]).toEqual({ key: {}, countDistinct: { category: 3, ref: 2, status: 3 } });
  });

  it('takes the list API filters', async () => {
    const r = await agg('sum=price&count=*&price_gte=10&status_in=paid,open');
    expect(r.body.data.groups[0]).toMatchObject({ count: 3, sum: { price: 60 } });
    expect((await agg('count=true&category_regex=^[ab]$')).body.data.groups[0].count).toBe(4);
  });
});

describe('group by', () => {
  it('one declared field, sorted by count then key', async () => {
    const r = await agg('groupBy=status&sort=-count&sum=price&count');
    expect(r.status).toBe(200);
    expect(r.body.data.groups).toEqual([
      { key: { status: 'paid' }, count: 3, sum: { price: 60 } },
      { key: { status: 'open' }, count: 2, sum: { price: 12.5 } },
      { key: { status: 'void' }, count: 1, sum: { price: null } },
    ]);
  });

  it('typed keys: Booleans as booleans, Numbers as numbers, missing as null (last)', async () => {
    const bool = await agg('groupBy=paid');
    expect(bool.body.data.groups).toEqual([{ key: { paid: false }, count: 3 }, { key: { paid: true }, count: 3 }]);
    const num = await agg('groupBy=price&sort=-price&limit=2');
    expect(num.body.data).toEqual({ groups: [{ key: { price: 30 }, count: 1 }, { key: { price: 20 }, count: 1 }], truncated: true });
    const missing = await agg('groupBy=category');
    expect(missing.body.data.groups.at(-1)).toEqual({ key: { category: null }, count: 1 });
  });

  it('dates truncated by month (UTC) and several keys', async () => {
    const r = await agg('groupBy=at:month,status&sum=price&count');
    expect(r.status).toBe(200);
    expect(r.body.data.groups).toEqual([
      { key: { at: '2026-01-01T00:00:00.000Z', status: 'paid' }, count: 2, sum: { price: 40 } },
      { key: { at: '2026-02-01T00:00:00.000Z', status: 'open' }, count: 1, sum: { price: 5 } },
      { key: { at: '2026-02-01T00:00:00.000Z', status: 'paid' }, count: 1, sum: { price: 20 } },
      { key: { at: '2026-03-01T00:00:00.000Z', status: 'open' }, count: 1, sum: { price: 7.5 } },
      { key: { at: '2026-03-01T00:00:00.000Z', status: 'void' }, count: 1, sum: { price: null } },
    ]);
    const days = await agg('groupBy=createdAt:day');
    expect(days.body.data.groups).toHaveLength(1);
    expect(days.body.data.groups[0].count).toBe(6);
  });

  it('soft-deleted documents only with include_deleted=true', async () => {
    const doc = await A.post('/api/data/orders', p.sk, { status: 'gone', price: 1 });
    expect((await A.del(`/api/data/orders/${doc.body._id}`, p.sk)).status).toBe(200);
    expect((await agg('groupBy=status')).body.data.groups.map((g: { key: { status: string } }) => g.key.status)).not.toContain('gone');
    expect((await agg('groupBy=status&include_deleted=true')).body.data.groups).toContainEqual({ key: { status: 'gone' }, count: 1 });
  });

  it('at most 1 000 groups, with truncated', async () => {
    await createCollection(env, p, 'many', [{ key: 'n', type: 'Number' }]);
    for (let i = 0; i < 11; i++) {
      const batch = Array.from({ length: 100 }, (_, j) => ({ n: i * 100 + j }));
      expect((await A.post('/api/data/many/bulk', p.sk, batch)).status).toBe(201);
    }
    const r = await A.get('/api/data/many/aggregate?groupBy=n&limit=5000', p.sk);
    expect(r.status).toBe(200);
    expect(r.body.data.groups).toHaveLength(1000);
    expect(r.body.data.truncated).toBe(true);
    expect(r.body.data.groups[999].key.n).toBe(999);
  });
});

describe('bad input is 400 with the reason', () => {
  it.each([
    ['sum=status', /only Number fields/],
    ['avg=nope', /declare it/],
    ['groupBy=meta.n', /top-level/],
    ['groupBy=meta', /declare it|Cannot group/],
    ['groupBy=status:month', /Cannot truncate/],
    ['groupBy=at:fortnight', /Invalid date truncation/],
    ['groupBy=a,b,c,d', /At most 3/],
    ['groupBy=status,status', /only once/],
    ['min=paid', /only Number, String and Date/],
    ['sort=-sum.price', /Cannot sort by/],
    ['sum=price&sort=bogus', /Cannot sort by/],
    ['count=maybe', /Invalid value for "count"/],
    ['sum=price,a1,a2,a3,a4,a5,a6,a7&count', /At most 8/],
    ['price_gt=abc&count', /expected a number/],
    ['groupBy=_id', /declare it|Cannot/],
    ['groupBy=constructor', /Invalid field|declare it/],
    ['sum=__proto__', /Invalid field|declare/],
  ])('%s', async (qs, reason) => {
    const r = await agg(qs);
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
    expect(r.body.message).toMatch(reason);
  });

  it('unknown collection is 404, the users collection 403', async () => {
    expect((await A.get('/api/data/nope/aggregate', p.sk)).status).toBe(404);
    expect((await A.get('/api/data/users/aggregate', p.sk)).status).toBe(403);
  });
});

describe('the operator route', () => {
  it('aggregates as the project owner; another operator gets 404', async () => {
    const r = await A.get(`/api/projects/${p.id}/data/orders/aggregate?groupBy=paid&sum=price&count`, p.owner.auth);
    expect(r.status).toBe(200);
    expect(r.body.data.groups).toContainEqual({ key: { paid: true }, count: 3, sum: { price: 60 } });
    const other = await makeProject(env.ctx);
    expect((await A.get(`/api/projects/${p.id}/data/orders/aggregate`, other.owner.auth)).status).toBe(404);
  });
});
