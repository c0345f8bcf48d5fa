/**
 * Atomic batch: operations across collections in one transaction. Every kind of failure
 * (schema, unique value, RLS owner rule, missing document, bad id, unknown or protected
 * collection, hard delete with the publishable key, quota) names the operation and leaves
 * nothing written, quota included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { usage } from '../../../src/lib/quota-queries.js';
import { LEASE_CHUNK } from '../../../src/lib/quota-leases.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
const alice = objectId();
const bob = objectId();
let asAlice: Record<string, string>;
let bobsNote: string;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  asAlice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  await createCollection(env, p, 'orders', [{ key: 'ref', type: 'String', unique: true }, { key: 'total', type: 'Number', required: true }]);
  await createCollection(env, p, 'lines', [{ key: 'order', type: 'String' }, { key: 'qty', type: 'Number' }]);
  const owned = [{ key: 'text', type: 'String' }, { key: 'userId', type: 'String' }];
  await createCollection(env, p, 'notes', owned, { enabled: true, mode: 'public-read', ownerField: 'userId' });
  const asBob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, bob)}` };
  bobsNote = (await A.post('/api/data/notes', asBob, { text: 'bob' })).body._id;
});
afterAll(() => env.close());

type Op = Record<string, unknown>;
const batch = (operations: Op[], h: Record<string, string> = p.sk) => A.post('/api/data/batch', h, { operations });
const count = async (c: string) => (await A.get(`/api/data/${c}?count=true&include_deleted=true`, p.sk)).body.data.count as number;
async function storedBytes(): Promise<number> {
  const rows = await env.ctx.db.admin.selectFrom('documents').select('size_bytes').where('project_id', '=', p.id).execute();
  return rows.reduce((n, r) => n + r.size_bytes, 0);
}
const dbBytes = () => usage(env.ctx.db.admin, { subjectId: p.id, metric: 'db_bytes' });

describe('a batch that succeeds', () => {
  it('runs every operation in order and answers each result', async () => {
    const seed = await A.post('/api/data/orders', p.sk, { ref: 'seed', total: 1 });
    const gone = await A.post('/api/data/lines', p.sk, { order: 'seed', qty: 9 });
    await A.del(`/api/data/lines/${gone.body._id}`, p.sk);
    const r = await batch([
      { op: 'create', collection: 'orders', data: { ref: 'o-1', total: 30 } },
      { op: 'create', collection: 'lines', data: { order: 'o-1', qty: 2 } },
      { op: 'update', collection: 'orders', id: seed.body._id, data: { total: 2 } },
      { op: 'restore', collection: 'lines', id: gone.body._id },
      { op: 'delete', collection: 'orders', id: seed.body._id },
    ]);
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    const results = r.body.data.results;
    expect(results.map((x: Op) => [x.op, x.collection])).toEqual([
      ['create', 'orders'], ['create', 'lines'], ['update', 'orders'], ['restore', 'lines'], ['delete', 'orders'],
    ]);
    expect(results[0].data).toMatchObject({ ref: 'o-1', total: 30, _id: results[0].id });
    expect(results[2].data).toMatchObject({ _id: seed.body._id, total: 2 });
    expect(results[3].data.isDeleted).toBe(false);
    expect(results[4]).toEqual({ op: 'delete', collection: 'orders', id: seed.body._id });
    expect((await A.get(`/api/data/orders/${results[0].id}`, p.sk)).status).toBe(200);
    expect((await A.get(`/api/data/orders/${seed.body._id}`, p.sk)).status).toBe(404);
    expect((await A.get(`/api/data/lines/${gone.body._id}`, p.sk)).body.data.qty).toBe(9);
  });

  it('the secret key purges with hard: true and the bytes are freed', async () => {
    const doc = await A.post('/api/data/lines', p.sk, { order: 'purge-me'.repeat(100), qty: 1 });
    const before = await storedBytes();
    const r = await batch([{ op: 'delete', collection: 'lines', id: doc.body._id, hard: true }]);
    expect(r.status).toBe(200);
    expect((await A.get(`/api/data/lines/${doc.body._id}?include_deleted=true`, p.sk)).status).toBe(404);
    expect(await storedBytes()).toBeLessThan(before - 800);
  });

  it('an end user batches their own writes under RLS', async () => {
    const r = await batch([{ op: 'create', collection: 'notes', data: { text: 'mine' } }], asAlice);
    expect(r.body.message).toBe('Batch committed.');
    expect(r.status).toBe(200);
    expect(r.body.data.results[0].data.userId).toBe(alice);
  });

  it('charges the quota for what it wrote, once', async () => {
    const before = await storedBytes();
    const operations = Array.from({ length: 20 }, (_, i) => ({ op: 'create', collection: 'lines', data: { order: `q${i}`.repeat(200), qty: i } }));
    const r = await batch(operations);
    expect(r.status).toBe(200);
    expect(await storedBytes()).toBeGreaterThan(before + 20 * 400);
    // The counter covers what is stored, plus what this node reserved ahead: a chunk and the
    // part of the batch's bound it did not use (the next writes spend it).
    const ahead = (await dbBytes()) - (await storedBytes());
    expect(ahead).toBeGreaterThanOrEqual(0);
    expect(ahead).toBeLessThanOrEqual(LEASE_CHUNK + 3 * JSON.stringify(operations).length);
  });
});

describe('all or nothing: each failure names the operation and writes nothing', () => {
  it.each([
    ['schema', { op: 'create', collection: 'orders', data: { ref: 'x' } }, 400, /required|total/i],
    ['wrong type', { op: 'create', collection: 'orders', data: { ref: 'y', total: 'many' } }, 400, /total/],
    ['unique value', { op: 'create', collection: 'orders', data: { ref: 'o-1', total: 1 } }, 409, /Duplicate value/],
    ['missing document', { op: 'update', collection: 'lines', id: objectId(), data: { qty: 1 } }, 404, /Document not found/],
    ['bad id', { op: 'delete', collection: 'lines', id: 'nope' }, 400, /Invalid ID/],
    ['unknown collection', { op: 'create', collection: 'nowhere', data: {} }, 404, /Collection not found/],
    ['users collection', { op: 'create', collection: 'Users', data: { email: 'a@b.c' } }, 403, /userAuth/],
    ['body not an object', { op: 'create', collection: 'lines', data: [1, 2] }, 400, /JSON object/],
    ['regex in body', { op: 'create', collection: 'lines', data: { $where: 1 } }, 400, /./],
  ] as Array<[string, Op, number, RegExp]>)('%s', async (_label, failing, status, reason) => {
    const lines = await count('lines');
    const orders = await count('orders');
    const bytes = await dbBytes();
    const r = await batch([
      { op: 'create', collection: 'lines', data: { order: 'rolled-back', qty: 1 } },
      { op: 'create', collection: 'orders', data: { ref: `never-${Math.random()}`, total: 5 } },
      failing,
      { op: 'create', collection: 'lines', data: { order: 'after', qty: 1 } },
    ]);
    expect(r.status).toBe(status);
    expect(r.body.success).toBe(false);
    expect(r.body.message).toMatch(/^Operation 2 \(/);
    expect(r.body.message).toMatch(reason);
    expect(r.body.operation).toBe(2);
    expect(await count('lines')).toBe(lines);
    expect(await count('orders')).toBe(orders);
    expect((await A.get('/api/data/lines?order=rolled-back', p.sk)).body.data.total).toBe(0);
    expect(await dbBytes()).toBe(bytes);
  });

  it('RLS owner rules: another user\'s document or a hard delete with the publishable key', async () => {
    const before = await count('notes');
    const steal = await batch([
      { op: 'create', collection: 'notes', data: { text: 'first' } },
      { op: 'update', collection: 'notes', id: bobsNote, data: { text: 'pwned' } },
    ], asAlice);
    expect(steal.status).toBe(403);
    expect(steal.body.message).toMatch(/^Operation 1 \(update notes\//);
    const hard = await batch([
      { op: 'create', collection: 'notes', data: { text: 'first' } },
      { op: 'delete', collection: 'notes', id: bobsNote, hard: true },
    ], asAlice);
    expect(hard.status).toBe(403);
    expect(await count('notes')).toBe(before);
    expect((await A.get(`/api/data/notes/${bobsNote}`, p.sk)).body.data.text).toBe('bob');
  });

  it('the plan\'s database limit: the batch is refused whole', async () => {
    const limit = 50 * 1024 * 1024;
    const counter = env.ctx.db.admin.updateTable('usage_counters').where('subject_id', '=', p.id).where('metric', '=', 'db_bytes');
    const saved = await dbBytes();
    await counter.set({ used: limit - 100 }).execute();
    const lines = await count('lines');
    const r = await batch(Array.from({ length: 5 }, () => ({ op: 'create', collection: 'lines', data: { order: 'x'.repeat(20_000) } })));
    expect(r.status).toBe(403);
    expect(r.body.message).toBe('Database limit exceeded.');
    expect(await count('lines')).toBe(lines);
    await counter.set({ used: saved }).execute();
  });
});

describe('a failed batch and the usage screen', () => {
  it('a failed batch of 40 creates of 10 KB leaves GET /usage where it was, not up by twice the batch', async () => {
    const q = await makeProject(env.ctx);
    await createCollection(env, q, 'big', [{ key: 'body', type: 'String' }, { key: 'n', type: 'Number', required: true }]);
    const reported = async () => (await A.get(`/api/projects/${q.id}/usage`, q.owner.auth)).body.data.database.used as number;
    await A.post('/api/data/big', q.sk, { body: 'warm', n: 0 });
    const before = await reported();
    const operations: Op[] = Array.from({ length: 40 }, (_, i) => ({ op: 'create', collection: 'big', data: { body: 'x'.repeat(10_000), n: i } }));
    operations.push({ op: 'create', collection: 'big', data: { body: 'no n' } });
    const r = await batch(operations, q.sk);
    expect(r.status).toBe(400);
    expect((await A.get('/api/data/big?count=true', q.sk)).body.data.count).toBe(1);
    // Nothing was written; the node may keep at most a chunk of allowance ahead, never the batch's bound.
    expect((await reported()) - before).toBeLessThanOrEqual(LEASE_CHUNK);
  });
});

describe('bad batches are 400', () => {
  it.each([
    ['no operations', { operations: [] }],
    ['101 operations', { operations: Array.from({ length: 101 }, () => ({ op: 'create', collection: 'lines', data: {} })) }],
    ['unknown op', { operations: [{ op: 'upsert', collection: 'lines', data: {} }] }],
    ['unknown member', { operations: [{ op: 'create', collection: 'lines', data: {}, sql: 'DROP' }] }],
    ['not a list', { operations: 'create' }],
    ['no body', undefined],
  ])('%s', async (_label, body) => {
    const r = await A.post('/api/data/batch', p.sk, body);
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
  });

  it('a collection cannot be named batch', async () => {
    const r = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name: 'Batch', schema: [] } });
    expect(r.statusCode).toBe(400);
    expect(r.json().message).toMatch(/reserved/);
  });
});
