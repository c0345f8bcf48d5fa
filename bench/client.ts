/**
 * @plinth/client against raw fetch (`npm run bench -- client`, issue 48): the data benchmark's
 * get by id and list (filter + range + sort, 20 of 10 000), each driven for BENCH_SECONDS by 16
 * concurrent loops in this process, once with `fetch` and the headers written by hand, once
 * with `plinth.collection('products').get()` / `.where(…).sort(…).list()`, interleaved over 3
 * rounds in the same run; prints requests per second and the client ÷ raw ratio (medians).
 * Then the client's own CPU per call, without network or server: both paths against a fetch
 * that answers a prepared list page at once (µs per call, 20 000 calls, median of 5).
 */
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createClient } from '../packages/client/src/index.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';
import { seedProducts } from './lib/products.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONCURRENCY = 16;
const ROUNDS = 3;
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function drive(op: () => Promise<unknown>): Promise<number> {
  const end = Date.now() + SECONDS * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        await op();
        n++;
      }
    }),
  );
  return n / SECONDS;
}

runBench('client', { PLINTH_RUN_WORKER: 'false' }, async ({ app, ctx }) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const p = await makeProject(ctx);
  const { ids } = await seedProducts(ctx, p.id, { docs: 10_000, indexes: [{ fields: ['category', 'price'] }] });
  await sql`ANALYZE documents`.execute(ctx.db.admin);
  const headers = { 'x-api-key': p.publishableKey };
  const plinth = createClient({ url, apiKey: p.publishableKey, auth: { storage: 'memory' } });
  const products = plinth.collection('products');
  const cat = () => `c${Math.floor(Math.random() * 10)}`;

  const scenarios: Array<[string, () => Promise<unknown>, () => Promise<unknown>]> = [
    [
      'get by id',
      async () => {
        const res = await fetch(`${url}/api/data/products/${pick(ids)}`, { headers });
        if (!res.ok) throw new Error(String(res.status));
        return (await res.json()).data;
      },
      () => products.get(pick(ids)),
    ],
    [
      'list (filter + range + sort)',
      async () => {
        const res = await fetch(`${url}/api/data/products?category=${cat()}&price_gte=1000&price_lt=9000&sort=-price`, { headers });
        if (!res.ok) throw new Error(String(res.status));
        return (await res.json()).data;
      },
      () => products.where({ category: cat(), price_gte: 1000, price_lt: 9000 }).sort('-price').list(),
    ],
  ];
  console.log(`| workload | raw fetch req/s | @plinth/client req/s | client ÷ raw |\n|---|--:|--:|--:|`);
  for (const [name, raw, client] of scenarios) {
    await drive(raw); // warm-up
    await drive(client);
    const r: number[] = [];
    const c: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      r.push(await drive(raw));
      c.push(await drive(client));
    }
    console.log(`| ${name} | ${median(r).toFixed(0)} | ${median(c).toFixed(0)} | ${(median(c) / median(r)).toFixed(3)} |`);
  }

  // The client's own cost: a fetch that answers at once with a 20-document page.
  const page = JSON.stringify({ success: true, data: (await products.limit(20).list()), message: 'ok' });
  const instant: typeof fetch = async () => new Response(page, { headers: { 'content-type': 'application/json' } });
  const offline = createClient({ url, apiKey: p.publishableKey, fetch: instant, auth: { storage: 'memory' } }).collection('products');
  await offline.limit(1).list(); // the session layer has read its (empty) storage
  const perCall = async (op: () => Promise<unknown>) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 20_000; i++) await op();
    return Number(process.hrtime.bigint() - t0) / 1000 / 20_000;
  };
  const rawOp = async () => (await (await instant(`${url}/api/data/products?category=c1&price_gte=1000&sort=-price`, { headers })).json()).data;
  const clientOp = () => offline.where({ category: 'c1', price_gte: 1000 }).sort('-price').list();
  const rr: number[] = [];
  const cc: number[] = [];
  for (let i = 0; i < 5; i++) {
    rr.push(await perCall(rawOp));
    cc.push(await perCall(clientOp));
  }
  console.log(`\nclient CPU per list call (20-document page, no network): raw ${median(rr).toFixed(1)} µs, @plinth/client ${median(cc).toFixed(1)} µs (+${(median(cc) - median(rr)).toFixed(1)} µs)`);
});
