/**
 * The console's records browser on a large collection (`npx tsx bench/console.ts`, one-off,
 * not in CI; BENCH_DOCS=1000000 by default, 10000 for the small case). Loads the documents
 * (SQL, as bench/data-1m.ts does: the point is the reading), then measures
 *   - the dashboard list route (first cursor page without a total, the next page, a filter,
 *     a sort on an indexed field) timed in-process;
 *   - in Debian's Chromium: time to the sign-in screen, and from opening the records browser
 *     to its first rows, and from "Next" to the next page's rows.
 * Needs `npm run build` (dist/ui) and /usr/bin/chromium.
 */
import net from 'node:net';
import { sql } from 'kysely';
import { chromium } from 'playwright-core';
import { createCollection, updateSchema } from '../src/modules/collections/service.js';
import { makeOperator, makeProject } from '../test/helpers/fixtures.js';
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

const port = await new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as net.AddressInfo).port;
    s.close(() => resolve(p));
  });
});

function stats(times: number[]) {
  const s = [...times].sort((a, b) => a - b);
  const at = (q: number) => s[Math.floor(q * (s.length - 1))]!.toFixed(1);
  return `p50 ${at(0.5)} ms, p95 ${at(0.95)} ms`;
}

runBench('console', { PUBLIC_URL: `http://127.0.0.1:${port}` }, async ({ app, ctx }) => {
  const t0 = Date.now();
  const op = await makeOperator(ctx, { plan: 'pro' });
  const p = await makeProject(ctx, op);
  const col = await createCollection(ctx, p.id, 'pro', { name: 'items', fields: [] });
  for (let from = 1; from <= N; from += 200_000) await seed(p.id, col.id, from, Math.min(N, from + 199_999)).execute(ctx.db.admin);
  await updateSchema(ctx, p.id, 'items', FIELDS);
  await sql`VACUUM ANALYZE documents`.execute(ctx.db.admin);
  console.log(`loaded ${N} documents in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

  const base = `/api/projects/${p.id}/data/items`;
  const time = async (url: string) => {
    const start = process.hrtime.bigint();
    const res = await app.inject({ method: 'GET', url, headers: op.auth });
    if (res.statusCode !== 200) throw new Error(res.body);
    return { ms: Number(process.hrtime.bigint() - start) / 1e6, data: res.json().data };
  };
  const first = await time(`${base}?limit=25&cursor=`);
  const cases: Array<[string, string]> = [
    ['first page (newest first, no total)', `${base}?limit=25&cursor=`],
    ['next page (cursor)', `${base}?limit=25&cursor=${first.data.nextCursor}`],
    ['filter category=cX', `${base}?limit=25&cursor=&category=c42`],
    ['sort price:asc', `${base}?limit=25&cursor=&sort=price:asc`],
    ['count=true (on demand)', `${base}?count=true`],
  ];
  console.log(`\n| dashboard list route, ${N} documents | in-process |\n|---|---|`);
  for (const [label, url] of cases) {
    const times: number[] = [];
    for (let i = 0; i < 30; i++) times.push((await time(url)).ms);
    console.log(`| ${label} | ${stats(times.slice(5))} |`);
  }

  await app.listen({ port, host: '127.0.0.1' });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const firstScreen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      const start = Date.now();
      await page.goto(`http://127.0.0.1:${port}/_/`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      firstScreen.push(Date.now() - start);
      await page.context().close();
    }
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/_/#/login`);
    await page.getByLabel('Email').fill(op.email);
    await page.getByLabel('Password').fill(op.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    const open: number[] = [];
    const next: number[] = [];
    for (let i = 0; i < 5; i++) {
      await page.goto(`http://127.0.0.1:${port}/_/#/projects`);
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      const start = Date.now();
      await page.goto(`http://127.0.0.1:${port}/_/#/p/${p.id}/data/items`);
      await page.locator('table.grid tbody tr').first().waitFor();
      open.push(Date.now() - start);
      const before = await page.locator('table.grid tbody tr').first().textContent();
      const t = Date.now();
      await page.getByRole('button', { name: 'Next' }).click();
      await page.waitForFunction((b) => document.querySelector('table.grid tbody tr')?.textContent !== b, before);
      next.push(Date.now() - t);
    }
    console.log(`\n| in Chromium | time |\n|---|---|`);
    console.log(`| first screen (sign-in) from navigation, cold context | ${stats(firstScreen)} |`);
    console.log(`| records browser: navigation to first rows (${N} docs) | ${stats(open)} |`);
    console.log(`| records browser: Next to the next page's rows | ${stats(next)} |`);
  } finally {
    await browser.close();
  }
});
