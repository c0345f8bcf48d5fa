/**
 * Data API benchmark (`npx tsx bench/data.ts`): boots its own embedded PostgreSQL and the app
 * in a temp dir, seeds 10 000 documents, and drives list (filter + range + sort), get by id,
 * create and update with autocannon (50 connections) against Plinth and against
 * bench/baseline.ts (bare Fastify + pg, same table, hand-written SQL). Prints a markdown table.
 */
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { AppContext } from '../src/context.js';
import { createCollection } from '../src/modules/collections/service.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { startBaseline } from './baseline.js';
import { runBench } from './lib/bench-app.js';
import { load, type LoadRequest } from './lib/load.js';
import { seedProducts } from './lib/products.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const DOCS = 10_000;
const VARIANTS = 500;
/** Other tenants' collections on the platform (4 declared fields each), created before the run. */
const OTHER_COLLECTIONS = Number(process.env.BENCH_OTHER_COLLECTIONS ?? 0);
/** The compound index a developer would declare for the list scenario (BENCH_COMPOUND=0: none). */
const INDEXES = process.env.BENCH_COMPOUND === '0' ? [] : [{ fields: ['category', 'price'] }];

/** `n` collections spread over projects of 20 each, as other tenants would have. */
async function makeOtherCollections(ctx: AppContext, n: number): Promise<void> {
  const fields = ['sku', 'brand', 'weight', 'rating'].map((key, i) => ({ key, type: i < 2 ? 'String' : 'Number' }));
  for (let i = 0; i < n; i += 20) {
    const other = await makeProject(ctx);
    for (let j = i; j < Math.min(n, i + 20); j++) await createCollection(ctx, other.id, 'pro', { name: `c${j}`, fields });
  }
}

/** `VARIANTS` requests made by `make` (random ids, filters): the load generator cycles them. */
const variants = (make: () => LoadRequest) => Array.from({ length: VARIANTS }, make);
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;

runBench('data', { PLINTH_RUN_WORKER: 'false' }, async ({ app, ctx, databaseUrl }) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  await makeOtherCollections(ctx, OTHER_COLLECTIONS);
  const p = await makeProject(ctx);
  const { collectionId, ids } = await seedProducts(ctx, p.id, { docs: DOCS, indexes: INDEXES });
  await sql`ANALYZE documents`.execute(ctx.db.admin);
  const base = await startBaseline(databaseUrl, p.id, collectionId);
  const listQs = () => `category=c${Math.floor(Math.random() * 10)}&price_gte=1000&price_lt=9000`;
  const scenarios: Array<[string, () => LoadRequest, () => LoadRequest]> = [
    // include_total=true: the baseline counts too, so this row stays a framework-overhead figure
    ['list (filter + range + sort)', () => ({ path: `/api/data/products?${listQs()}&sort=-price&include_total=true` }), () => ({ path: `/list?${listQs()}` })],
    ['get by id', () => ({ path: `/api/data/products/${pick(ids)}` }), () => ({ path: `/doc/${pick(ids)}` })],
    ['create', () => ({ method: 'POST', path: '/api/data/products', body: JSON.stringify({ name: 'new', price: 5, category: 'c1' }) }),
      () => ({ method: 'POST', path: '/doc', body: JSON.stringify({ name: 'new', price: 5, category: 'c1' }) })],
    ['update', () => ({ method: 'PATCH', path: `/api/data/products/${pick(ids)}`, body: JSON.stringify({ stock: 7 }) }),
      () => ({ method: 'PATCH', path: `/doc/${pick(ids)}`, body: JSON.stringify({ stock: 7 }) })],
  ];
  const only = process.env.BENCH_ONLY;
  const rows: string[] = [];
  for (const [name, plinthReq, baseReq] of scenarios) {
    if (only && !name.startsWith(only)) continue;
    const a = await load({ url, headers: p.sk, seconds: SECONDS, variants: variants(plinthReq) });
    const b = await load({ url: base.url, seconds: SECONDS, variants: variants(baseReq) });
    const bad = a.non2xx + a.errors + b.non2xx + b.errors;
    rows.push(`| ${name} | ${a.rps.toFixed(0)} | ${a.p50} / ${a.p99} | ${b.rps.toFixed(0)} | ${b.p50} / ${b.p99} | ${(a.rps / b.rps).toFixed(2)}× | ${bad} |`);
  }
  console.log(`\n${DOCS} documents, compound indexes ${JSON.stringify(INDEXES)}, ${OTHER_COLLECTIONS} other collections, 50 connections, ${SECONDS} s per run, load generated from a separate process\n`);
  console.log('| scenario | Plinth req/s | p50 / p99 ms | baseline req/s | p50 / p99 ms | ratio | non-2xx |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  await base.close();
});
