/**
 * Plinth beside what a user would pick instead (`npm run bench -- peers`): Parse Server 9.10
 * (bench/peers/parse.ts, installed on first use from its own lockfile) and the limit, a
 * hand-written Fastify + pg server with the one index each workload needs
 * (bench/peers/limit-server.ts). All three run on the same PostgreSQL (the embedded cluster this
 * benchmark boots, one database each), hold the same 10 000 documents (bench/peers/dataset.ts)
 * and get the same four workloads: create, list (owner = X, 250 ≤ n < 750, newest first, 20),
 * get by id, update one field. Each server is pinned to CPU 1 and the load generator to CPU 0
 * (where `taskset` exists); PostgreSQL is not pinned. Targets are interleaved, their order
 * rotated per repetition, and the table shows the median of BENCH_REPS repetitions (default 3),
 * each BENCH_WARMUP s (3) of warm-up then BENCH_SECONDS s (10) measured at 50 connections.
 * BENCH_WORKLOADS=list,get and BENCH_TARGETS=plinth narrow a run (a profile: set
 * BENCH_PLINTH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof').
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { runBench } from './lib/bench-app.js';
import { load, type LoadResult } from './lib/load.js';
import { clusterCpuUs, processCpuUs } from './lib/proc-cpu.js';
import { limitTarget, startLimit } from './peers/limit.js';
import { parseTarget, startParse } from './peers/parse.js';
import { plinthTarget, startPlinth } from './peers/plinth.js';
import type { Server } from './peers/process.js';
import { WORKLOADS, type Target, type Workload } from './peers/target.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const CONNECTIONS = 50;
const SERVER_CPU = 1;
const LOAD_CPU = 0;
const multiCore = os.availableParallelism() > 1;
const only = (name: string) => process.env[name]?.split(',').map((s) => s.trim().toLowerCase());
const workloads = WORKLOADS.filter((w) => only('BENCH_WORKLOADS')?.includes(w) ?? true);
const measured = (t: Target) => only('BENCH_TARGETS')?.some((n) => t.name.toLowerCase().startsWith(n)) ?? true;

interface Sample extends LoadResult {
  serverUs: number | null;
  pgUs: number | null;
}

async function measure(t: Target, w: Workload, clusterDir: string): Promise<Sample> {
  const variants = t.requests(w);
  const cpu = multiCore ? LOAD_CPU : undefined;
  if (WARMUP > 0) await load({ url: t.url, connections: CONNECTIONS, seconds: WARMUP, variants, cpu });
  const serverCpu = () => processCpuUs(t.pid);
  const [s0, p0] = [serverCpu(), clusterCpuUs(clusterDir)];
  const r = await load({ url: t.url, connections: CONNECTIONS, seconds: SECONDS, variants, cpu });
  const [s1, p1] = [serverCpu(), clusterCpuUs(clusterDir)];
  const n = r.rps * SECONDS;
  const per = (a: number | null, b: number | null) => (a === null || b === null || n === 0 ? null : (b - a) / n);
  return { ...r, serverUs: per(s0, s1), pgUs: per(p0, p1) };
}

const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : NaN);
const fmt = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US').replace(/,/g, ' ') : '–');
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const us = (xs: Array<number | null>) => (xs.every((x) => x !== null) ? fmt(median(xs as number[])) : '–');

function report(targets: Target[], samples: Map<string, Sample[]>): void {
  const [parse, limit, plinth] = targets as [Target, Target, Target];
  const get = (t: Target, w: Workload) => samples.get(`${t.name}/${w}`) ?? [];
  console.log(`\n${REPS} repetition(s), median; ${WARMUP} s warm-up + ${SECONDS} s at ${CONNECTIONS} connections; servers on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}; one PostgreSQL for all\n`);
  console.log(`| workload | ${parse.name} req/s (p99 ms) | ${limit.name} req/s (p99 ms) | Plinth req/s (p99 ms) | Plinth ÷ Parse | Plinth ÷ limit | failed requests |`);
  console.log('|---|--:|--:|--:|--:|--:|--:|');
  for (const w of workloads) {
    const cell = (t: Target) => `${fmt(median(get(t, w).map((s) => s.rps)))} (${median(get(t, w).map((s) => s.p99))})`;
    const rps = (t: Target) => median(get(t, w).map((s) => s.rps));
    const bad = targets.flatMap((t) => get(t, w)).reduce((a, s) => a + s.non2xx + s.errors, 0);
    console.log(`| ${w} | ${cell(parse)} | ${cell(limit)} | ${cell(plinth)} | ${ratio(rps(plinth), rps(parse))} | ${ratio(rps(plinth), rps(limit))} | ${bad} |`);
  }
  console.log('\nCPU per request, µs (server process / PostgreSQL):\n');
  console.log(`| workload | ${targets.map((t) => t.name).join(' | ')} |`);
  console.log(`|---|${targets.map(() => '--:').join('|')}|`);
  for (const w of workloads) {
    console.log(`| ${w} | ${targets.map((t) => `${us(get(t, w).map((s) => s.serverUs))} / ${us(get(t, w).map((s) => s.pgUs))}`).join(' | ')} |`);
  }
}

/** The URL of another database on the same server. */
function databaseUrlOf(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function vacuum(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

// This process only seeds Plinth (its own app is not listening); Plinth serves from its own process.
runBench('peers', { PLINTH_RUN_WORKER: 'false' }, async ({ ctx, config, databaseUrl }) => {
  const clusterDir = path.join(config.dataDir, 'pg');
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-peers-'));
  const servers: Server[] = [];
  try {
    for (const db of ['bench_parse', 'bench_limit']) await sql.raw(`CREATE DATABASE ${db}`).execute(ctx.db.admin);
    const cpu = multiCore ? SERVER_CPU : undefined;
    servers.push(await startParse(databaseUrlOf(databaseUrl, 'bench_parse'), 41337, workDir, cpu));
    servers.push(await startLimit(databaseUrlOf(databaseUrl, 'bench_limit'), 41338, cpu));
    servers.push(await startPlinth(databaseUrl, config.dataDir, 41339, cpu));
    const targets = [parseTarget(servers[0]!), limitTarget(servers[1]!), plinthTarget(ctx, servers[2]!)];
    for (const t of targets) await t.prepare();
    for (const db of ['bench_parse', 'bench_limit', new URL(databaseUrl).pathname.slice(1)]) await vacuum(databaseUrlOf(databaseUrl, db));

    const samples = new Map<string, Sample[]>();
    for (let rep = 0; rep < REPS; rep++) {
      const order = [...targets.slice(rep % targets.length), ...targets.slice(0, rep % targets.length)];
      for (const t of order.filter(measured)) {
        for (const w of workloads) {
          const s = await measure(t, w, clusterDir);
          samples.set(`${t.name}/${w}`, [...(samples.get(`${t.name}/${w}`) ?? []), s]);
          console.error(`rep ${rep + 1} ${t.name} ${w}: ${fmt(s.rps)} req/s p99 ${s.p99} ms`);
        }
      }
    }
    report(targets, samples);
  } finally {
    for (const s of servers) await s.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
});
