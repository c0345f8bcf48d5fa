/**
 * Threat: hostile input (SQL in filters and names, prototype keys, deep nesting, huge bodies,
 * wrong types) reaching the database or crashing the server. Every case is a 4xx, never 500,
 * and never leaves a half-written document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
let id: string;

beforeAll(async () => {
  env = await createTestEnv({ BODY_LIMIT: '64kb' });
  p = await makeProject(env.ctx);
  A = api(env);
  await createCollection(env, p, 'items', [{ key: 'n', type: 'Number' }, { key: 'when', type: 'Date' }, { key: 'ok', type: 'Boolean' }]);
  id = (await A.post('/api/data/items', p.sk, { n: 1, name: "O'Brien" })).body._id;
});
afterAll(() => env.close());

const count = async () => (await env.ctx.db.admin.selectFrom('documents').select('id').execute()).length;

describe('filters', () => {
  it('SQL in field names and values is just data', async () => {
    const evil = encodeURIComponent("x') OR 1=1 --");
    expect((await A.get(`/api/data/items?name=${evil}`, p.sk)).body.data.total).toBe(0);
    expect((await A.get(`/api/data/items?${evil}=1`, p.sk)).status).toBe(400); // whitespace in a field name
    expect((await A.get(`/api/data/items?${encodeURIComponent("x'--")}=1`, p.sk)).body.data.total).toBe(0);
    expect((await A.get(`/api/data/items?name=${encodeURIComponent("O'Brien")}`, p.sk)).body.data.total).toBe(1);
    expect((await A.get(`/api/data/items?sort=${evil}`, p.sk)).status).toBe(400);
    expect((await A.get(`/api/data/items?sort=${encodeURIComponent("x'--")}`, p.sk)).status).toBe(200);
    expect((await A.get('/api/data/items?filter[name][eq]=x', p.sk)).status).toBe(200);
  });

  it('wrong types on typed fields are 400; absent fields give an empty result', async () => {
    for (const qs of ['n=abc', 'n_gt=1e999', 'when_lt=notadate', 'ok=maybe', '_id=123', 'createdAt_gt=nope', 'n_in=1,x']) {
      const r = await A.get(`/api/data/items?${qs}`, p.sk);
      expect(r.status, qs).toBe(400);
    }
    expect((await A.get('/api/data/items?ghost_gt=5', p.sk)).body.data.total).toBe(0);
    expect((await A.get('/api/data/items?$where=1', p.sk)).status).toBe(400);
    expect((await A.get('/api/data/items?__proto__.x=1', p.sk)).status).toBe(400);
  });

  it('a NUL character in a query value is 400', async () => {
    for (const qs of ['name=a%00b', 'name_regex=a%00', 'name_in=x,a%00b']) {
      expect((await A.get(`/api/data/items?${qs}`, p.sk)).status, qs).toBe(400);
    }
  });

  it('a date JavaScript accepts but timestamptz cannot hold is 400 (filter and cursor)', async () => {
    expect((await A.get('/api/data/items?createdAt_gt=275760-09-13', p.sk)).status).toBe(400);
    const cursor = Buffer.from(JSON.stringify({ v: '+275760-09-13T00:00:00.000Z', id: 'a'.repeat(24) })).toString('base64url');
    expect((await A.get(`/api/data/items?sort=createdAt&cursor=${cursor}`, p.sk)).status).toBe(400);
  });

  it('a pattern PostgreSQL rejects is 400; an unreadable cursor restarts', async () => {
    expect((await A.get(`/api/data/items?name_regex=${encodeURIComponent('(?<name>x)')}`, p.sk)).status).toBe(400);
    expect((await A.get('/api/data/items?cursor=%%%garbage', p.sk)).status).toBe(200);
    expect((await A.get('/api/data/items?limit=abc', p.sk)).status).toBe(400);
    expect((await A.get('/api/data/items?page=-5&limit=0', p.sk)).body.data).toMatchObject({ page: 1, limit: 1 });
  });
});

describe('bodies', () => {
  it('prototype and $ keys are 400 at any depth', async () => {
    const before = await count();
    const bodies = [
      '{"__proto__":{"admin":true}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"a":{"constructor":1}}',
      '{"$set":{"a":1}}',
      '{"a":[{"$gt":1}]}',
    ];
    for (const payload of bodies) {
      const r = await env.app.inject({ method: 'POST', url: '/api/data/items', headers: { ...p.sk, 'content-type': 'application/json' }, payload });
      expect(r.statusCode, payload).toBe(400);
    }
    expect(await count()).toBe(before);
  });

  it('a NUL character in a key or string is 400 and writes nothing', async () => {
    const before = await count();
    for (const body of [{ name: 'a\u0000b' }, { 'k\u0000': 1 }, { list: [{ s: '\u0000' }] }]) {
      expect((await A.post('/api/data/items', p.sk, body)).status, JSON.stringify(body)).toBe(400);
      expect((await A.patch(`/api/data/items/${id}`, p.sk, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await A.post('/api/data/items/bulk', p.sk, [{ n: 5 }, { name: '\u0000' }])).status).toBe(400);
    expect(await count()).toBe(before);
  });

  it('dotted updates through non-objects or into prototypes are 400', async () => {
    await A.patch(`/api/data/items/${id}`, p.sk, { obj: { a: 1 } });
    for (const body of [{ 'n.x': 1 }, { 'obj.__proto__.x': 1 }, { 'obj..x': 1 }, { 'obj.$x': 1 }, { 'createdAt.x': 1 }]) {
      const r = await A.patch(`/api/data/items/${id}`, p.sk, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('deep nesting is 400, huge bodies 413, malformed JSON 400, non-objects 400', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect((await A.post('/api/data/items', p.sk, { deep })).status).toBe(400);
    expect((await A.post('/api/data/items', p.sk, { big: 'x'.repeat(70_000) })).status).toBe(413);
    const bad = await env.app.inject({ method: 'POST', url: '/api/data/items', headers: { ...p.sk, 'content-type': 'application/json' }, payload: '{"a":' });
    expect(bad.statusCode).toBe(400);
    expect((await A.post('/api/data/items', p.sk, [1, 2])).status).toBe(400);
    expect((await A.post('/api/data/items/bulk', p.sk, [1])).body.message).toMatch(/Item at index 0 must be a valid object/);
  });

  it('bad ids are 400 on every id route; system fields in the body are ignored', async () => {
    for (const [m, url] of [['GET', '/api/data/items/zz'], ['PUT', '/api/data/items/zz'], ['DELETE', '/api/data/items/zz'], ['POST', '/api/data/items/zz/restore']] as const) {
      const r = await env.app.inject({ method: m, url, headers: p.sk, ...(m === 'PUT' || m === 'POST' ? { payload: {} } : {}) });
      expect(r.statusCode, `${m} ${url}`).toBe(400);
    }
    const r = await A.post('/api/data/items', p.sk, { _id: 'aaaaaaaaaaaaaaaaaaaaaaaa', isDeleted: true, n: 2 });
    expect(r.body._id).not.toBe('aaaaaaaaaaaaaaaaaaaaaaaa');
    expect(r.body.isDeleted).toBe(false);
  });
});
