/**
 * A collection filled in bulk gets planner statistics at once, not at autovacuum's next round:
 * until then the planner guesses, and lists on a freshly imported collection ran 25 times
 * slower (docs/data.md). autovacuum is switched off on the partition here, so only Plinth's own
 * ANALYZE can give it statistics.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionName } from '../../../src/modules/collections/partition-queries.js';
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
});
afterAll(() => env.close());

async function reltuples(collectionId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT reltuples::float8 AS n FROM pg_class WHERE oid = to_regclass(${partitionName(collectionId)})`.execute(env.ctx.db.admin);
  return rows[0]!.n;
}

async function freshCollection(name: string) {
  const col = await createCollection(env, p, name, [{ key: 'n', type: 'Number' }, { key: 'title', type: 'String' }]);
  await sql.raw(`ALTER TABLE ${partitionName(col._id)} SET (autovacuum_enabled = false)`).execute(env.ctx.db.admin);
  return col;
}

const docs = (count: number) => Array.from({ length: count }, (_, i) => ({ n: i, title: `Überschrift ${i}` }));

describe('bulk writes and planner statistics', () => {
  it('a bulk insert into a never-analyzed collection analyzes it in the background', async () => {
    const col = await freshCollection('imported');
    expect(await reltuples(col._id)).toBeLessThan(0);
    expect((await A.post('/api/data/imported/bulk', p.sk, docs(100))).status).toBe(201);
    await expect.poll(() => reltuples(col._id), { timeout: 10_000 }).toBe(100);
  });

  it('a few documents at a time leave statistics to autovacuum', async () => {
    const col = await freshCollection('trickle');
    for (let i = 0; i < 3; i++) expect((await A.post('/api/data/trickle', p.sk, { n: i, title: 'one' })).status).toBe(201);
    expect((await A.post('/api/data/trickle/bulk', p.sk, docs(10))).status).toBe(201);
    await new Promise((r) => setTimeout(r, 500));
    expect(await reltuples(col._id)).toBeLessThan(0);
  });
});
