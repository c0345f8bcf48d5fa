/**
 * Large-collection check (`npx tsx bench/data-1m.ts`): 1 000 000 documents in one collection
 * plus 100 other projects' data (2 000 documents each) beside it, then an indexed
 * equality filter + sort page through the real API (in-process inject), timed server-side.
 * Target: < 20 ms. Also prints the plan of the generated list query.
 */
import { sql } from 'kysely';
import { createCollection, updateSchema } from '../src/modules/collections/service.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';

const N = Number(process.env.BENCH_DOCS ?? 1_000_000);
const FIELDS = [{ key: 'name', type: 'String' }, { key: 'category', type: 'String' }, { key: 'price', type: 'Number' }];

function seed(projectId: string, collectionId: string, from: number, to: number) {
  return sql`
    INSERT INTO documents (project_id, collection_id, id, data, size_bytes, created_at, updated_at)
    SELECT ${projectId}, ${collectionId}, lpad(to_hex(g), 16, '0') || substr(${collectionId}::text, 17, 8), d, octet_length(d::text),
           now() - g * interval '1 second', now()
    FROM generate_series(${from}::int, ${to}::int) g,
         LATERAL (SELECT jsonb_build_object('name', 'item ' || g, 'category', 'c' || (g % 1000), 'price', (g * 37) % 100000) AS d) x`;
}

runBench('1m', {}, async ({ app, ctx }) => {
  const t0 = Date.now();
  for (let i = 0; i < 100; i++) {
    const other = await makeProject(ctx);
    const c = await createCollection(ctx, other.id, 'pro', { name: 'items', fields: FIELDS });
    await seed(other.id, c.id, 1, 2000).execute(ctx.db.admin);
  }
  const p = await makeProject(ctx);
  // Load first, declare the schema after: one index build instead of 1M index insertions.
  const col = await createCollection(ctx, p.id, 'pro', { name: 'items', fields: [] });
  for (let from = 1; from <= N; from += 200_000) await seed(p.id, col.id, from, Math.min(N, from + 199_999)).execute(ctx.db.admin);
  await updateSchema(ctx, p.id, 'items', FIELDS);
  await sql`VACUUM ANALYZE documents`.execute(ctx.db.admin);
  console.log(`loaded ${N} + 200000 documents in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

  const url = '/api/data/items?category=c42&sort=-createdAt&limit=20&include_total=true';
  const times: number[] = [];
  let total = 0;
  for (let i = 0; i < 60; i++) {
    const start = process.hrtime.bigint();
    const res = await app.inject({ method: 'GET', url: url.replace('c42', `c${(i * 7) % 1000}`), headers: p.sk });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (res.statusCode !== 200) throw new Error(res.body);
    total = res.json().data.total;
  }
  const warm = times.slice(10).sort((a, b) => a - b);
  const at = (q: number) => warm[Math.floor(q * (warm.length - 1))]!.toFixed(2);
  console.log(`\n| query | matches | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|`);
  console.log(`| category=cX&sort=-createdAt (page + total) | ${total} | ${at(0.5)} | ${at(0.95)} | ${warm[warm.length - 1]!.toFixed(2)} |`);

  const plan = await ctx.db.tenant({ projectId: p.id, keyKind: 'secret' }, (tx) =>
    sql<{ 'QUERY PLAN': string }>`EXPLAIN (ANALYZE, COSTS OFF)
      SELECT id, data FROM documents WHERE project_id = ${p.id} AND collection_id = ${col.id} AND deleted_at IS NULL
        AND plinth_txt(data, ${'category'}::text) = ${'c42'}::text ORDER BY created_at DESC, id DESC LIMIT 20`.execute(tx),
  );
  console.log('\n' + plan.rows.map((r) => r['QUERY PLAN']).filter((l) => !/SubPlan|collections|Index Cond: \(\(project_id\)|Rows Removed/.test(l)).join('\n'));
});
