/** Unique fields backed by real indexes (also under concurrency), and the database quota. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usage } from '../../../src/lib/quota-queries.js';
import { LEASE_CHUNK } from '../../../src/lib/quota-leases.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  await createCollection(env, p, 'accounts', [{ key: 'handle', type: 'String', unique: true }, { key: 'age', type: 'Number', unique: true }]);
});
afterAll(() => env.close());

describe('unique fields', () => {
  it('409 on a duplicate, case-exact, scoped to live documents of the collection', async () => {
    const first = await A.post('/api/data/accounts', p.sk, { handle: 'ann' });
    expect(first.status).toBe(201);
    const dup = await A.post('/api/data/accounts', p.sk, { handle: ' ann ' });
    expect(dup.status).toBe(409);
    expect(dup.body.message).toBe('Duplicate value violates unique constraint.');
    expect((await A.post('/api/data/accounts', p.sk, { handle: 'other' })).status).toBe(201);
    expect((await A.patch(`/api/data/accounts/${first.body._id}`, p.sk, { handle: 'other' })).status).toBe(409);
    // Soft delete releases the value; restoring while it is taken is 409.
    await A.del(`/api/data/accounts/${first.body._id}`, p.sk);
    expect((await A.post('/api/data/accounts', p.sk, { handle: 'ann' })).status).toBe(201);
    expect((await A.post(`/api/data/accounts/${first.body._id}/restore`, p.sk, {})).status).toBe(409);
  });

  it('only one of many concurrent inserts of the same value wins', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => A.post('/api/data/accounts', p.sk, { age: 42 })));
    expect(results.filter((r) => r.status === 201).length).toBe(1);
    expect(results.filter((r) => r.status === 409).length).toBe(7);
  });

  it('a bulk insert with a duplicate inserts nothing', async () => {
    const r = await A.post('/api/data/accounts/bulk', p.sk, [{ handle: 'z1' }, { handle: 'z1' }]);
    expect(r.status).toBe(409);
    expect((await A.get('/api/data/accounts?handle=z1', p.sk)).body.data.total).toBe(0);
  });
});

/** Bytes actually stored for the project (soft-deleted documents still count). */
async function storedBytes(): Promise<number> {
  const rows = await env.ctx.db.admin.selectFrom('documents').select('size_bytes').where('project_id', '=', p.id).execute();
  return rows.reduce((n, r) => n + r.size_bytes, 0);
}

describe('database quota', () => {
  it('many shrinking updates never leave this node holding more than two chunks: the excess goes back to the counter', async () => {
    await createCollection(env, p, 'shrinking', [{ key: 'note', type: 'String' }]);
    const counter = { subjectId: p.id, metric: 'db_bytes' };
    const made = await A.post('/api/data/shrinking/bulk', p.sk, Array.from({ length: 60 }, () => ({ note: 'x'.repeat(1500) })));
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const ids = ((await A.get('/api/data/shrinking?limit=100', p.sk)).body.data.items as Array<{ _id: string }>).map((d) => d._id);
    expect(ids).toHaveLength(60);
    const before = await usage(env.ctx.db.admin, counter);
    for (const id of ids) expect((await A.patch(`/api/data/shrinking/${id}`, p.sk, { note: 'y' })).status).toBe(200);
    // 60 × ~1.5 KB freed: far past two chunks, so most of it reached the counter.
    expect(await usage(env.ctx.db.admin, counter)).toBeLessThan(before - 60 * 1500 + 2 * LEASE_CHUNK);
    const ahead = (await usage(env.ctx.db.admin, counter)) - (await storedBytes());
    expect(ahead).toBeGreaterThanOrEqual(0);
    expect(ahead).toBeLessThanOrEqual(2 * LEASE_CHUNK);
  });

  it('a batch that shrinks documents leaves the counter within two chunks of the stored bytes once it commits', async () => {
    await createCollection(env, p, 'shrinkbatch', [{ key: 'note', type: 'String' }]);
    const counter = { subjectId: p.id, metric: 'db_bytes' };
    expect((await A.post('/api/data/shrinkbatch/bulk', p.sk, Array.from({ length: 40 }, () => ({ note: 'x'.repeat(1500) })))).status).toBe(201);
    const ids = ((await A.get('/api/data/shrinkbatch?limit=100', p.sk)).body.data.items as Array<{ _id: string }>).map((d) => d._id);
    const before = await storedBytes();
    const operations = ids.map((id) => ({ op: 'update', collection: 'shrinkbatch', id, data: { note: 'y' } }));
    const r = await A.post('/api/data/batch', p.sk, { operations });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await storedBytes()).toBeLessThan(before - 40 * 1400);
    const ahead = (await usage(env.ctx.db.admin, counter)) - (await storedBytes());
    expect(ahead).toBeGreaterThanOrEqual(0);
    expect(ahead).toBeLessThanOrEqual(2 * LEASE_CHUNK);
  });

  it('charges inserts and updates, frees hard deletes, and refuses beyond the plan (403)', async () => {
    const counter = { subjectId: p.id, metric: 'db_bytes' };
    // The counter covers what is stored plus at most two chunks this node holds ahead (quota-leases.ts).
    const ahead = async () => (await usage(env.ctx.db.admin, counter)) - (await storedBytes());
    const c = await A.post('/api/data/accounts', p.sk, { note: 'x'.repeat(1000) });
    expect(await storedBytes()).toBeGreaterThan(1000);
    expect(await ahead()).toBeGreaterThanOrEqual(0);
    expect(await ahead()).toBeLessThanOrEqual(2 * LEASE_CHUNK);
    const before = await usage(env.ctx.db.admin, counter);
    const storedBefore = await storedBytes();
    await A.patch(`/api/data/accounts/${c.body._id}`, p.sk, { note: 'y' });
    // A shrink joins this node's allowance (no counter round trip): the counter still holds
    // the bytes, as reserved by this node, never more than two chunks ahead of what is stored.
    expect(await storedBytes()).toBeLessThan(storedBefore - 900);
    expect(await usage(env.ctx.db.admin, counter)).toBe(before);
    expect(await ahead()).toBeLessThanOrEqual(2 * LEASE_CHUNK);
    await A.del(`/api/data/accounts/${c.body._id}?hard=true`, p.sk);
    expect(await ahead()).toBeGreaterThanOrEqual(0);
    expect(await ahead()).toBeLessThanOrEqual(2 * LEASE_CHUNK);

    // Fill up to just below the free plan's 50 MB.
    const limit = 50 * 1024 * 1024;
    await env.ctx.db.admin.updateTable('usage_counters').set({ used: limit - 100 }).where('subject_id', '=', p.id).where('metric', '=', 'db_bytes').execute();
    // Larger than any allowance this node holds, so it must reserve against the counter.
    const over = await A.post('/api/data/accounts', p.sk, { note: 'x'.repeat(LEASE_CHUNK + 1000) });
    expect(over.status).toBe(403);
    expect(over.body.message).toBe('Database limit exceeded.');
    expect((await A.get('/api/data/accounts?count=true', p.sk)).body.data.count).toBe(3);
  });
});
