/**
 * Threat: several API nodes spending one project's quota at once overspend it. Each node
 * reserves ahead in chunks; near the limit they fall back to exact reservations. Whatever the
 * interleaving, what they accept never exceeds the limit, and after they give back unspent
 * allowance the counter equals exactly what was spent.
 *
 * Threat: one node's burst of large writes starves the others. Each write takes its size bound
 * and returns the unused rest to the node's allowance; had the node kept it all, the counter
 * would read their sum as used and no other node could spend it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usage } from '../../src/lib/quota-queries.js';
import { QuotaLeases } from '../../src/lib/quota-leases.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeProject } from '../helpers/fixtures.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

describe('quota leases across two nodes', () => {
  it('never accept more than the limit, and release restores the exact count', async () => {
    const p = await makeProject(env.ctx);
    const counter = { subjectId: p.id, metric: 'db_bytes' };
    const limit = 100_000;
    const nodes = [new QuotaLeases(16 * 1024), new QuotaLeases(16 * 1024)];
    const db = env.ctx.db.admin;
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => nodes[i % 2]!.take(db, counter, 1000, limit)),
    );
    const accepted = results.filter(Boolean).length;
    expect(accepted * 1000).toBeLessThanOrEqual(limit);
    expect(accepted).toBeGreaterThanOrEqual(90); // near the limit the nodes go exact, not idle
    expect(await usage(db, counter)).toBeLessThanOrEqual(limit);
    for (const n of nodes) await n.release(db);
    expect(await usage(db, counter)).toBe(accepted * 1000);
  });

  it('a failed write gives its bytes back to the node, not to waste', async () => {
    const p = await makeProject(env.ctx);
    const counter = { subjectId: p.id, metric: 'db_bytes' };
    const node = new QuotaLeases(0);
    expect(await node.take(env.ctx.db.admin, counter, 500, 1000)).toBe(true);
    node.give(counter, 500); // the write failed
    expect(await node.take(env.ctx.db.admin, counter, 1000, 1000)).toBe(true); // 500 held + 500 new
    expect(await node.take(env.ctx.db.admin, counter, 1, 1000)).toBe(false);
    expect(await usage(env.ctx.db.admin, counter)).toBe(1000);
  });

  it('a burst of large writes leaves the node two chunks at most, and another node can spend the rest', async () => {
    const p = await makeProject(env.ctx);
    const counter = { subjectId: p.id, metric: 'db_bytes' };
    const chunk = 1000;
    const limit = 100_000;
    const [a, b] = [new QuotaLeases(chunk), new QuotaLeases(chunk)];
    const db = env.ctx.db.admin;
    // Ten concurrent writes on node a, each taking a bound of 9 000 and growing by 1 000.
    const taken = await Promise.all(Array.from({ length: 10 }, () => a.take(db, counter, 9000, limit)));
    expect(taken.every(Boolean)).toBe(true);
    for (let i = 0; i < 10; i++) {
      a.give(counter, 8000);
      await a.trim(db, counter);
    }
    const spent = 10 * 1000;
    expect(await usage(db, counter)).toBeLessThanOrEqual(spent + 2 * chunk);
    expect(await b.take(db, counter, limit - spent - 2 * chunk, limit)).toBe(true);
  });
});
