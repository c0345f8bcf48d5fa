/**
 * A batch pays its bound ahead, outside its transaction; when its writes outgrow that bound,
 * the rest is reserved inside the batch's own transaction. Never through a second tenant call
 * of the project from inside the first: with one slot per project that call would wait for
 * the slot its own caller holds, and fail with 429 project_busy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usage } from '../../../src/lib/quota-queries.js';
import { paidForAll } from '../../../src/modules/data/quota.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject } from '../../helpers/fixtures.js';

let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv({ PROJECT_DB_CONCURRENCY: '1', PROJECT_DB_QUEUE_MS: '200' });
});
afterAll(() => env.close());

const used = (projectId: string) => usage(env.ctx.db.admin, { subjectId: projectId, metric: 'db_bytes' });

/** A batch with a bound of 10 bytes whose one write grows by `growth`. */
async function outgrowingBatch(projectId: string, growth: number, limit: number) {
  const scope = { projectId, keyKind: 'secret' as const };
  return paidForAll(env.ctx, scope, 10, limit, (pay, settle) =>
    env.ctx.db.tenant(scope, async (tx) => {
      await pay(10, async () => ({ result: 'written', growth }));
      await settle(tx);
      return 'committed';
    }),
  );
}

describe('a batch whose writes outgrow their bound', () => {
  it('reserves the rest in its own transaction, with a single slot per project', async () => {
    const p = await makeProject(env.ctx);
    const before = await used(p.id);
    await expect(outgrowingBatch(p.id, 5000, 1_000_000)).resolves.toBe('committed');
    // The bound came from a lease (a chunk ahead); the 4 990 bytes it missed were reserved exactly.
    const after = await used(p.id);
    expect(after - before).toBeGreaterThanOrEqual(5000);
    expect(env.ctx.db.usage().tenant.waiting).toBe(0);
  });

  it('is refused with 403 database_limit when the plan has no room for the rest, and charges nothing more', async () => {
    const p = await makeProject(env.ctx);
    const limit = 4000;
    await expect(outgrowingBatch(p.id, 5000, limit)).rejects.toMatchObject({ status: 403, code: 'database_limit' });
    // What stays reserved is at most the node's allowance (the lease), never the 5 000 bytes.
    expect(await used(p.id)).toBeLessThanOrEqual(limit);
  });
});
