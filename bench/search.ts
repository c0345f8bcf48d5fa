/**
 * Full-text search (`npm run bench -- search`): 1 000 000 documents (BENCH_DOCS) whose title
 * and body draw words from a vocabulary of 5 000, marked searchable after loading (one GIN
 * build), then searches through the real API (in-process inject), timed end to end: a rare
 * word, a common word (ranked, first page), two words, and a word with a filter.
 * p50/p99 over 40 warm calls each.
 */
import { sql } from 'kysely';
import { createCollection, updateSchema } from '../src/modules/collections/service.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';

const N = Number(process.env.BENCH_DOCS ?? 1_000_000);
const FIELDS = [
  { key: 'title', type: 'String', searchable: true },
  { key: 'body', type: 'String', searchable: true },
  { key: 'category', type: 'String' },
];

/** Word i of the vocabulary: `w<i>`; low numbers are common (a skewed draw), high ones rare. */
function seed(projectId: string, collectionId: string, from: number, to: number) {
  return sql`
    INSERT INTO documents (project_id, collection_id, id, data, size_bytes, created_at, updated_at)
    SELECT ${projectId}, ${collectionId}, lpad(to_hex(g), 16, '0') || substr(${collectionId}::text, 17, 8), d, octet_length(d::text),
           now() - g * interval '1 second', now()
    FROM generate_series(${from}::int, ${to}::int) g,
         LATERAL (SELECT jsonb_build_object(
           'title', 'w' || (g % 5000) || ' w' || ((g * 7) % 50),
           'body', 'w' || ((g * 13) % 5000) || ' w' || ((g * 31) % 500) || ' w' || (g % 10) || ' kitten',
           'category', 'c' || (g % 100)) AS d) x`;
}

runBench('search', {}, async ({ app, ctx }) => {
  const t0 = Date.now();
  const p = await makeProject(ctx);
  const col = await createCollection(ctx, p.id, 'pro', { name: 'items', fields: [] });
  for (let from = 1; from <= N; from += 200_000) await seed(p.id, col.id, from, Math.min(N, from + 199_999)).execute(ctx.db.admin);
  await updateSchema(ctx, p.id, 'items', FIELDS);
  await sql`VACUUM ANALYZE documents`.execute(ctx.db.admin);
  console.log(`loaded and indexed ${N} documents in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
  const cases = [
    ['rare word (≈200 matches)', 'search=w4321&limit=20'],
    ['common word, ranked first page (≈100 000 matches)', 'search=w3&limit=20'],
    ['common word, newest first (sort=-createdAt)', 'search=w3&sort=-createdAt&limit=20'],
    ['two words', 'search=' + encodeURIComponent('w4321 kitten') + '&limit=20'],
    ['rare word + filter category', 'search=w4321&category=c21&limit=20'],
  ];
  console.log('| search | items | p50 ms | p99 ms |\n|---|--:|--:|--:|');
  for (const [label, qs] of cases) {
    const times: number[] = [];
    let items = 0;
    for (let i = 0; i < 50; i++) {
      const start = process.hrtime.bigint();
      const res = await app.inject({ method: 'GET', url: `/api/data/items?${qs}`, headers: p.sk });
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
      if (res.statusCode !== 200) throw new Error(res.body);
      items = res.json().data.items.length;
    }
    const warm = times.slice(10).sort((a, b) => a - b);
    const at = (q: number) => warm[Math.floor(q * (warm.length - 1))]!.toFixed(1);
    console.log(`| ${label} | ${items} | ${at(0.5)} | ${at(0.99)} |`);
  }
});
