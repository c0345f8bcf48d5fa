/**
 * What the usage counters cost the data API (`npx tsx bench/usage-counters.ts`, one-off), the
 * way bench/request-log.ts measured the request log: one embedded PostgreSQL, one booted
 * context, two apps on it, one counting every app request per project and hour and one not
 * (`USAGE_COUNTERS=false` is the same switch: the request hook is not installed), driven in
 * turns (on, off, on, off…) with the same requests, so the machine's drift hits both alike.
 * The request log is on in both (the default). GET by id and POST (create) of
 * /api/data/products with the secret key, 50 connections, load from a separate process.
 * Prints each run's rate and the CPU each request cost (this Node process, the server, and
 * PostgreSQL's processes from /proc), with the medians. An "on" run's window ends after its
 * counts are written. Then the counters' own work measured directly: the increment on the
 * request's path, and the batched upsert.
 */
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildApp } from '../src/server.js';
import { UsageCounters } from '../src/modules/usage/counters.js';
import { makeOperator, makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';
import { load, type LoadRequest, type LoadResult } from './lib/load.js';
import { clusterCpuUs } from './lib/proc-cpu.js';
import { seedProducts } from './lib/products.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DOCS = 10_000;
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

runBench('usage-counters', { PLINTH_RUN_WORKER: 'false' }, async ({ app: on, ctx }) => {
  // The second app on the same context and database, with the counters' request hook off.
  ctx.config.usage.counters = false;
  const off = await buildApp(ctx);
  ctx.config.usage.counters = true;
  await on.listen({ host: '127.0.0.1', port: 0 });
  await off.listen({ host: '127.0.0.1', port: 0 });
  const urlOf = (a: typeof on) => `http://127.0.0.1:${(a.server.address() as AddressInfo).port}`;
  const p = await makeProject(ctx, await makeOperator(ctx, { plan: 'pro' }));
  const { ids } = await seedProducts(ctx, p.id, { docs: DOCS });
  await sql`ANALYZE documents`.execute(ctx.db.admin);
  let n = 0;
  const scenarios: Array<[string, () => LoadRequest]> = [
    ['GET /api/data/products/:id', () => ({ path: `/api/data/products/${pick(ids)}` })],
    [
      'POST /api/data/products',
      () => ({ method: 'POST', path: '/api/data/products', body: JSON.stringify({ name: `new ${n++}`, price: n % 1000, category: `c${n % 10}`, stock: 1 }), headers: { 'content-type': 'application/json' } }),
    ],
  ];
  const clusterDir = path.join(ctx.config.dataDir, 'pg');
  interface Run extends LoadResult {
    nodeUs: number;
    pgUs: number;
  }
  const measured = async (which: 'on' | 'off', variants: LoadRequest[]): Promise<Run> => {
    const cpu0 = process.cpuUsage();
    const pg0 = clusterCpuUs(clusterDir) ?? 0;
    const r = await load({ url: urlOf(which === 'on' ? on : off), headers: p.sk, seconds: SECONDS, variants });
    await ctx.requestLog.flush(); // both sides write their request log rows within their window
    if (which === 'on') await ctx.usage.flush();
    const cpu = process.cpuUsage(cpu0);
    const pg = (clusterCpuUs(clusterDir) ?? 0) - pg0;
    const requests = r.rps * SECONDS;
    return { ...r, nodeUs: (cpu.user + cpu.system) / requests, pgUs: pg / requests };
  };
  console.log(`\n${DOCS} documents, 50 connections, ${SECONDS} s per run, ${ROUNDS} rounds of on/off in turns, load average ${os.loadavg()[0]!.toFixed(1)}\n`);
  console.log('| scenario | counters | req/s (each run) | median req/s | Node CPU µs/request (median) | PostgreSQL CPU µs/request (median) | total µs/request | non-2xx |');
  console.log('|---|---|---|---|---|---|---|---|');
  const summary: string[] = [];
  const offTotals: Array<[string, number]> = [];
  for (const [name, make] of scenarios) {
    const variants = Array.from({ length: 500 }, make);
    const runs = { on: [] as Run[], off: [] as Run[] };
    for (const a of [on, off]) await load({ url: urlOf(a), headers: p.sk, seconds: 2, variants });
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      for (const which of order) runs[which].push(await measured(which, variants));
    }
    const totals = { on: 0, off: 0 };
    const rates = { on: 0, off: 0 };
    for (const which of ['on', 'off'] as const) {
      const rs = runs[which];
      const node = median(rs.map((r) => r.nodeUs));
      const pg = median(rs.map((r) => r.pgUs));
      totals[which] = median(rs.map((r) => r.nodeUs + r.pgUs));
      rates[which] = median(rs.map((r) => r.rps));
      const bad = rs.reduce((k, r) => k + r.non2xx + r.errors, 0);
      console.log(`| ${name} | ${which} | ${rs.map((r) => r.rps.toFixed(0)).join(', ')} | ${rates[which].toFixed(0)} | ${node.toFixed(0)} | ${pg.toFixed(0)} | ${totals[which].toFixed(0)} | ${bad} |`);
    }
    offTotals.push([name, totals.off]);
    summary.push(
      `${name}: median rate on/off ${((rates.on / rates.off) * 100).toFixed(1)} %; CPU per request (Node + PostgreSQL) ${(((totals.on - totals.off) / totals.off) * 100).toFixed(1)} % more with the counters`,
    );
  }
  console.log('');
  for (const line of summary) console.log(line);

  const { rows } = await sql<{ n: string; v: string }>`SELECT count(*) AS n, coalesce(sum(value), 0) AS v FROM usage_hourly WHERE project_id = ${p.id}`.execute(ctx.db.admin);
  console.log(`\nusage_hourly for the project after the A/B: ${rows[0]!.n} rows, ${rows[0]!.v} requests counted; ${ctx.usage.stats.flushes} flushes, ${ctx.usage.stats.failed} failed`);

  // The counters' own work, measured directly (the rates above swing with the machine's load).
  const CALLS = 1_000_000;
  const direct = new UsageCounters({ db: ctx.db.admin, log: ctx.log, enabled: true, flushMs: 3_600_000 });
  let c0 = process.cpuUsage();
  const someId = '0000000000000000000000ff';
  for (let i = 0; i < CALLS; i++) direct.request(someId, 'apiKey', i % 7 ? 200 : 404);
  let c = process.cpuUsage(c0);
  const requestNs = ((c.user + c.system) * 1000) / CALLS;
  // One flush per USAGE_FLUSH_MS writes one row per project and metric counted since the last.
  const PROJECTS = 1000;
  const projects = Array.from({ length: PROJECTS }, (_, i) => (0x100000 + i).toString(16).padStart(24, '0'));
  const FLUSHES = 20;
  c0 = process.cpuUsage();
  const pg0 = clusterCpuUs(clusterDir) ?? 0;
  for (let f = 0; f < FLUSHES; f++) {
    for (const id of projects) {
      direct.request(id, 'apiKey', 200);
      direct.request(id, 'secretKey', 404);
    }
    await direct.flush();
  }
  c = process.cpuUsage(c0);
  const flushNodeUs = (c.user + c.system) / FLUSHES;
  const flushPgUs = ((clusterCpuUs(clusterDir) ?? 0) - pg0) / FLUSHES;
  await direct.close();
  console.log(`\ndirect: one counted request ${requestNs.toFixed(0)} ns on its path; one flush of ${PROJECTS} projects × 2 metrics: ${(flushNodeUs / 1000).toFixed(2)} ms Node + ${(flushPgUs / 1000).toFixed(2)} ms PostgreSQL (every USAGE_FLUSH_MS, whatever the request rate)`);
  for (const [name, offUs] of offTotals) console.log(`${name}: the increment is ${((requestNs / 1000 / offUs) * 100).toFixed(3)} % of its ${offUs.toFixed(0)} µs per request without the counters`);
  await off.close();
});
