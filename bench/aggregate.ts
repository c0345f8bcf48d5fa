/**
 * Aggregation (`npm run bench -- aggregate`): 100 000 documents in one collection (BENCH_DOCS),
 * then aggregate calls through the real API (in-process inject), timed end to end:
 * count by a declared field (1 000 groups), sum + avg by a declared field with a filter,
 * count by month of createdAt. p50/p99 over 40 warm calls each.
 */
import { sql } from 'kysely';
import { createCollection, updateSchema } from '../src/modules/collections/service.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';

const N = Number(process.env.BENCH_DOCS ?? 100_000);
const FIELDS = [{ key: 'name', type: 'String' }, { key: 'category', type: 'String' }, { key: 'price', type: 'Number' }];

function seed(projectId: string, collectionId: string, from: number, to: number) {
  return sql`
    INSERT INTO documents (project_id, collection_id, id, data, size_bytes, created_at, updated_at)
    SELECT ${projectId}, ${collectionId}, lpad(to_hex(g), 16, '0') || substr(${collectionId}::text, 17, 8), d, octet_length(d::text),
           now() - g * interval '1 minute', now()
    FROM generate_series(${from}::int, ${to}::int) g,
         LATERAL (SELECT jsonb_build_object('name', 'item ' || g, 'category', 'c' || (g % 1000), 'price', (g * 37) % 100000) AS d) x`;
}

runBench('aggregate', {}, async ({ app, ctx }) => {
  const p = await makeProject(ctx);
  const col = await createCollection(ctx, p.id, 'pro', { name: 'items', fields: [] });
  for (let from = 1; from <= N; from += 100_000) await seed(p.id, col.id, from, Math.min(N, from + 99_999)).execute(ctx.db.admin);
  await updateSchema(ctx, p.id, 'items', FIELDS);
  await sql`VACUUM ANALYZE documents`.execute(ctx.db.admin);

  const cases = [
    ['count by category (1 000 groups)', 'groupBy=category&count&limit=1000'],
    ['sum+avg of price by category, price_gte=50000', 'groupBy=category&sum=price&avg=price&price_gte=50000&limit=1000'],
    ['count by createdAt:month', 'groupBy=createdAt:month&count'],
    ['count of one category (no groups)', 'category=c42&count'],
  ];
  console.log(`${N} documents\n\n| aggregate | groups | p50 ms | p99 ms |\n|---|--:|--:|--:|`);
  for (const [label, qs] of cases) {
    const times: number[] = [];
    let groups = 0;
    for (let i = 0; i < 50; i++) {
      const start = process.hrtime.bigint();
      const res = await app.inject({ method: 'GET', url: `/api/data/items/aggregate?${qs}`, headers: p.sk });
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
      if (res.statusCode !== 200) throw new Error(res.body);
      groups = res.json().data.groups.length;
    }
    const warm = times.slice(10).sort((a, b) => a - b);
    const at = (q: number) => warm[Math.floor(q * (warm.length - 1))]!.toFixed(1);
    console.log(`| ${label} | ${groups} | ${at(0.5)} | ${at(0.99)} |`);
  }
});
