/**
 * What the request log costs the data API (`npx tsx bench/request-log.ts`, one-off): one
 * embedded PostgreSQL, one booted context, two apps on it, one recording every request in the
 * log and one not (`REQUEST_LOG=false` is the same switch), driven in turns (on, off, on, off…)
 * with the same requests, so the machine's drift hits both alike. GET list and GET by id of
 * /api/data/products with the secret key, 50 connections, load from a separate process.
 * Prints each run's rate and the CPU each request cost (this Node process, which is the
 * server: the load runs in a child, and PostgreSQL's postmaster and backends, from /proc), with
 * the medians: on a machine shared with other work the rates swing with its load, while CPU
 * per request barely does, and on a CPU-bound node the rate is what CPU per request allows.
 * An "on" run's window ends after its last batch is written. Then the log's rows written and
 * dropped.
 */
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sql } from 'kysely';
import { buildApp } from '../src/server.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';
import { load, type LoadRequest, type LoadResult } from './lib/load.js';
import { clusterCpuUs } from './lib/proc-cpu.js';
import { seedProducts } from './lib/products.js';
import { RequestLog } from '../src/modules/logs/buffer.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DOCS = 10_000;
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

runBench('request-log', { PLINTH_RUN_WORKER: 'false' }, async ({ app: on, ctx }) => {
  // The second app on the same context and database, with the log switched off.
  ctx.config.requestLog.enabled = false;
  const off = await buildApp(ctx);
  ctx.config.requestLog.enabled = true;
  await on.listen({ host: '127.0.0.1', port: 0 });
  await off.listen({ host: '127.0.0.1', port: 0 });
  const urlOf = (a: typeof on) => `http://127.0.0.1:${(a.server.address() as AddressInfo).port}`;
  const p = await makeProject(ctx);
  const { ids } = await seedProducts(ctx, p.id, { docs: DOCS });
  await sql`ANALYZE documents`.execute(ctx.db.admin);
  const scenarios: Array<[string, () => LoadRequest]> = [
    ['GET /api/data/products?limit=20', () => ({ path: `/api/data/products?limit=20&category=c${Math.floor(Math.random() * 10)}` })],
    ['GET /api/data/products/:id', () => ({ path: `/api/data/products/${pick(ids)}` })],
  ];
  const clusterDir = path.join(ctx.config.dataDir, 'pg');
  interface Run extends LoadResult {
    nodeUs: number;
    pgUs: number;
  }
  /** One load run, with the CPU this process (the server) and PostgreSQL spent per request. */
  const measured = async (which: 'on' | 'off', variants: LoadRequest[]): Promise<Run> => {
    const cpu0 = process.cpuUsage();
    const pg0 = clusterCpuUs(clusterDir) ?? 0;
    const r = await load({ url: urlOf(which === 'on' ? on : off), headers: p.sk, seconds: SECONDS, variants });
    if (which === 'on') await ctx.requestLog.flush();
    const cpu = process.cpuUsage(cpu0);
    const pg = (clusterCpuUs(clusterDir) ?? 0) - pg0;
    const requests = r.rps * SECONDS;
    return { ...r, nodeUs: (cpu.user + cpu.system) / requests, pgUs: pg / requests };
  };
  console.log(`\n${DOCS} documents, 50 connections, ${SECONDS} s per run, ${ROUNDS} rounds of on/off in turns, load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)}\n`);
  console.log('| scenario | log | req/s (each run) | median req/s | Node CPU µs/request (median) | PostgreSQL CPU µs/request (median) | total µs/request | non-2xx |');
  console.log('|---|---|---|---|---|---|---|---|');
  const summary: string[] = [];
  const offTotals: Array<[string, number]> = [];
  for (const [name, make] of scenarios) {
    const variants = Array.from({ length: 500 }, make);
    const runs = { on: [] as Run[], off: [] as Run[] };
    // Warm-up of both (JIT, plans, caches), not counted.
    for (const a of [on, off]) await load({ url: urlOf(a), headers: p.sk, seconds: 2, variants });
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate which goes first, so neither always runs on the warmer (or busier) moment.
      const order = i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      for (const which of order) runs[which].push(await measured(which, variants));
    }
    const totals = { on: 0, off: 0 };
    for (const which of ['on', 'off'] as const) {
      const rs = runs[which];
      const node = median(rs.map((r) => r.nodeUs));
      const pg = median(rs.map((r) => r.pgUs));
      totals[which] = median(rs.map((r) => r.nodeUs + r.pgUs));
      const bad = rs.reduce((n, r) => n + r.non2xx + r.errors, 0);
      console.log(`| ${name} | ${which} | ${rs.map((r) => r.rps.toFixed(0)).join(', ')} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${node.toFixed(0)} | ${pg.toFixed(0)} | ${totals[which].toFixed(0)} | ${bad} |`);
    }
    offTotals.push([name, totals.off]);
    summary.push(`${name}: the log costs ${(((totals.on - totals.off) / totals.off) * 100).toFixed(1)} % CPU per request (Node + PostgreSQL), i.e. a CPU-bound rate of ${((totals.off / totals.on) * 100).toFixed(1)} % of the rate without it`);
  }
  console.log('');
  for (const line of summary) console.log(line);

  // The log's own work, measured directly (the rates above swing with the machine's load):
  // a request's row pushed to the buffer, then written in batches of 1000 as the nodes do.
  const ROWS = 100_000;
  const direct = new RequestLog({ db: ctx.db.admin, log: ctx.log, flushMs: 60_000, bufferRows: ROWS * 2, batchRows: ROWS * 2 });
  const now = Date.now();
  let c0 = process.cpuUsage();
  for (let i = 0; i < ROWS; i++) direct.record(p.id, now + i, 'GET', '/api/data/:collectionName/:id', i % 7 ? 200 : 404, 1.5, i % 7 ? null : 'document_not_found', null);
  let c = process.cpuUsage(c0);
  const recordNs = ((c.user + c.system) * 1000) / ROWS;
  await direct.close();
  const writer = new RequestLog({ db: ctx.db.admin, log: ctx.log, flushMs: 60_000, bufferRows: 2000, batchRows: 2000 });
  c0 = process.cpuUsage();
  const pg0 = clusterCpuUs(clusterDir) ?? 0;
  for (let b = 0; b < ROWS / 1000; b++) {
    for (let i = 0; i < 1000; i++) writer.record(p.id, now + b * 1000 + i, 'GET', '/api/data/:collectionName/:id', i % 7 ? 200 : 404, 1.5, i % 7 ? null : 'document_not_found', null);
    await writer.flush();
  }
  c = process.cpuUsage(c0);
  const nodeWriteUs = (c.user + c.system) / ROWS - recordNs / 1000;
  const pgWriteUs = ((clusterCpuUs(clusterDir) ?? 0) - pg0) / ROWS;
  const perRequestUs = recordNs / 1000 + nodeWriteUs + pgWriteUs;
  console.log(`\ndirect cost per logged request: record ${recordNs.toFixed(0)} ns, batched write ${nodeWriteUs.toFixed(1)} µs Node + ${pgWriteUs.toFixed(1)} µs PostgreSQL = ${perRequestUs.toFixed(1)} µs`);
  for (const [name, off] of offTotals) console.log(`${name}: ${((perRequestUs / off) * 100).toFixed(2)} % of its ${off.toFixed(0)} µs per request without the log`);
  await writer.close();
  await ctx.requestLog.flush();
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM request_logs`.execute(ctx.db.admin);
  console.log(`\nrequest log: ${ctx.requestLog.stats.written} rows written, ${ctx.requestLog.stats.dropped} dropped (buffer ${ctx.config.requestLog.bufferRows}), ${rows[0]!.n} in the table`);
  await off.close();
});
