/**
 * Cluster benchmark (`npx tsx bench/cluster.ts`, after `npm run build`): real Plinth processes
 * (`dist/main.js` API nodes without a worker, `dist/worker.js` workers; test/cluster/processes.ts)
 * on one PostgreSQL (embedded, or DATABASE_URL), reached through a TCP proxy this script can cut,
 * and a fake Resend answering after 20 ms. Everything runs on this one machine, the load
 * generator (autocannon, in this process) included. Measures:
 *   1. GET /api/data/notes/:id throughput against 1 API node, then 2 (the connections split
 *      evenly over the nodes, as a round-robin balancer would), rate limits off;
 *   2. the time 1 worker process, then 2, take to drain 10 000 queued mails;
 *   3. recovery after PostgreSQL goes away for every process (all connections dropped, new
 *      ones refused, for BENCH_OUTAGE_MS) and comes back: until both nodes' /api/health is 200,
 *      a write succeeds on both, and a mail sent then is delivered by the workers;
 *   4. how long the jobs of a SIGKILLed worker wait before another worker takes them, for two
 *      WORKER_DEAD_AFTER_MS settings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { boot } from '../src/boot.js';
import { prepareDatabase } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { sendMail } from '../src/modules/mail/send.js';
import { build } from '../scripts/build.mjs';
import { makeCollection, makeProject } from '../test/helpers/fixtures.js';
import { startTcpProxy } from '../test/helpers/tcp-proxy.js';
import { startFakeResend } from '../test/fakes/resend.js';
import { call, freePort, spawnNode, until, waitApiReady, type Node } from '../test/cluster/processes.js';

interface Result {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (opts: object, cb: (err: Error | null, res: Result) => void) => unknown;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DRAIN = Number(process.env.BENCH_DRAIN ?? 10_000);
const OUTAGE_MS = Number(process.env.BENCH_OUTAGE_MS ?? 5000);
const WORKER_CONCURRENCY = process.env.WORKER_CONCURRENCY ?? '32';

await build();
const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-cluster-'));
const embedded = process.env.DATABASE_URL ? null : await startEmbeddedPostgres(path.join(dir, 'db'), 'plinth_cluster_bench');
const dbUrl = process.env.DATABASE_URL ?? embedded!.url;
await prepareDatabase(dbUrl);
const target = new URL(dbUrl);
const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
const resend = await startFakeResend();
resend.latencyMs = 20;
const config = loadConfig({ PLINTH_DATA_DIR: dir, DATABASE_URL: dbUrl, LOG_LEVEL: 'warn', LOG_FORMAT: 'json', MAIL_MONTHLY_LIMIT: '-1', RESEND_API_KEY: 're_bench', RESEND_BASE_URL: resend.url });
const booted = await boot(config, { skipMigrations: true });
const { ctx } = booted;
const project = await makeProject(ctx);
await makeCollection(ctx, project.id, 'notes', [{ key: 'title', type: 'String' }]);
const record = (await ctx.projects.byId(project.id))!;

const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  PLINTH_DATA_DIR: dir,
  DATABASE_URL: proxy.via(dbUrl),
  DB_CONNECT_TIMEOUT_MS: '1000',
  ENCRYPTION_KEY: config.encryptionKey.toString('hex'),
  DASHBOARD_JWT_SECRET: config.dashboardJwtSecret.toString('hex'),
  LOG_LEVEL: 'warn',
  LOG_FORMAT: 'json',
  RATE_LIMIT_SCALE: '0',
  MAIL_MONTHLY_LIMIT: '-1',
  RESEND_API_KEY: 're_bench',
  RESEND_BASE_URL: resend.url,
  DASHBOARD: 'false',
  PLINTH_RUN_WORKER: 'false',
  WORKER_CONCURRENCY,
  ...extra,
});

const nodes: Node[] = [];
async function startApi(name: string): Promise<Node> {
  const node = spawnNode(name, 'api', env(), await freePort());
  nodes.push(node);
  await waitApiReady(node);
  return node;
}
const heartbeats = async () => (await sql<{ process_id: string; worker_ids: string[] }>`SELECT process_id, worker_ids FROM worker_heartbeats`.execute(ctx.db.admin)).rows;
async function startWorker(name: string, extra: Record<string, string> = {}): Promise<Node> {
  const before = new Set((await heartbeats()).map((h) => h.process_id));
  const node = spawnNode(name, 'worker', env(extra));
  nodes.push(node);
  const row = await until(`${name} to beat`, async () => (await heartbeats()).find((h) => !before.has(h.process_id)));
  node.workerIds = row.worker_ids;
  return node;
}
const count = async (query: ReturnType<typeof sql<{ n: number }>>) => (await query.execute(ctx.db.admin)).rows[0]!.n;
const queued = () => count(sql<{ n: number }>`SELECT count(*)::int AS n FROM mail_logs WHERE status = 'queued'`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cannon(url: string, connections: number, duration: number): Promise<Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration, headers: { 'x-api-key': project.secretKey } }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** Total req/s over the nodes, the connections split evenly; the worst p50/p99 of the runs. */
async function throughput(api: Node[], docId: string): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const url = (n: Node) => `${n.url}/api/data/notes/${docId}`;
  await Promise.all(api.map((n) => cannon(url(n), CONNECTIONS / api.length, 2))); // warm-up
  const runs = await Promise.all(api.map((n) => cannon(url(n), CONNECTIONS / api.length, SECONDS)));
  return {
    rps: runs.reduce((s, r) => s + r.requests.average, 0),
    p50: Math.max(...runs.map((r) => r.latency.p50)),
    p99: Math.max(...runs.map((r) => r.latency.p99)),
    errors: runs.reduce((s, r) => s + r.non2xx + r.errors, 0),
  };
}

/** Printed as it comes: a long run that fails late still shows what it measured. */
const out = { push: (...lines: string[]) => void console.log(lines.join('\n')) };
const row = (...cells: Array<string | number>) => out.push(`| ${cells.join(' | ')} |`);

console.log(`${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the start\n`);
try {
  // 1. Throughput, 1 node vs 2, twice each (alternating, to see the machine's noise).
  const api1 = await startApi('api-1');
  const created = await call(api1, 'POST', '/api/data/notes', { headers: { 'x-api-key': project.secretKey }, body: { title: 'bench' } });
  const docId = created.json()._id as string;
  const api2 = await startApi('api-2');
  out.push(`### Throughput: GET /api/data/notes/:id, ${CONNECTIONS} connections, ${SECONDS} s per run\n`, '| API nodes | req/s | p50 / p99 ms | errors |', '|---|---|---|---|');
  const by: Record<number, number[]> = { 1: [], 2: [] };
  for (const n of [1, 2, 1, 2, 1, 2]) {
    const r = await throughput(n === 1 ? [api1] : [api1, api2], docId);
    by[n]!.push(r.rps);
    row(n, r.rps.toFixed(0), `${r.p50} / ${r.p99}`, r.errors);
  }
  const ratio = median(by[2]!) / median(by[1]!);
  out.push('', `2 nodes / 1 node: ${ratio.toFixed(2)}×\n`);

  // 2. Mail drain, 1 worker vs 2.
  out.push(`### Drain of ${DRAIN} queued mails (fake provider 20 ms, WORKER_CONCURRENCY=${WORKER_CONCURRENCY} per process)\n`, '| workers | seconds | mails/s | provider sends | failed |', '|---|---|---|---|---|');
  for (const n of [1, 2]) {
    await sql`DELETE FROM graphile_worker._private_jobs`.execute(ctx.db.admin);
    await sql`DELETE FROM mail_logs`.execute(ctx.db.admin);
    const sentBefore = resend.requests.filter((r) => r.path === '/emails').length;
    for (let q = 0; q < DRAIN; q += 50) {
      await Promise.all(Array.from({ length: Math.min(50, DRAIN - q) }, (_, i) => sendMail(ctx, record, { to: 'fill@example.com', subject: `fill ${q + i}`, text: 't' })));
    }
    // Held back until every worker is up, then released at once (they find them on their next poll).
    await sql`UPDATE graphile_worker._private_jobs SET run_at = now() + interval '1 hour'`.execute(ctx.db.admin);
    const workers = [];
    for (let i = 0; i < n; i++) workers.push(await startWorker(`drain-${n}-${i}`));
    const start = Date.now();
    await sql`UPDATE graphile_worker._private_jobs SET run_at = now()`.execute(ctx.db.admin);
    await until('the drain', async () => (await queued()) === 0, 600_000, 50);
    const s = (Date.now() - start) / 1000;
    const failed = await count(sql<{ n: number }>`SELECT count(*)::int AS n FROM mail_logs WHERE status = 'failed'`);
    row(n, s.toFixed(1), (DRAIN / s).toFixed(0), resend.requests.filter((r) => r.path === '/emails').length - sentBefore, failed);
    for (const w of workers) await w.kill('SIGTERM');
  }

  // 3. Recovery after PostgreSQL goes away for every process.
  const workers = [await startWorker('w-1'), await startWorker('w-2')];
  out.push('', `### Recovery after PostgreSQL is unreachable for ${OUTAGE_MS / 1000} s (2 API nodes, 2 workers), from the moment it is back\n`, '| run | both /api/health 200 | a write on both nodes | a mail sent then delivered | 503s during the outage |', '|---|---|---|---|---|');
  for (let run = 1; run <= 3; run++) {
    let stop = false;
    let refused = 0;
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        const r = await call([api1, api2][i % 2]!, 'GET', `/api/data/notes/${docId}`, { headers: { 'x-api-key': project.secretKey } }).catch(() => null);
        if (r?.status === 503) refused++;
        await sleep(20);
      }
    })();
    await proxy.cut();
    await sleep(OUTAGE_MS);
    await proxy.restore();
    const t0 = Date.now();
    const healthy = until('health', async () => (await Promise.all([api1, api2].map((n) => call(n, 'GET', '/api/health')))).every((r) => r.status === 200), 120_000, 20).then(() => Date.now() - t0);
    const writes = Promise.all([api1, api2].map((n) => until('a write', async () => (await call(n, 'POST', '/api/data/notes', { headers: { 'x-api-key': project.secretKey }, body: { title: 'after' } })).status === 201, 120_000, 20))).then(() => Date.now() - t0);
    const subject = `after outage ${run}`;
    const mailed = until('a mail accepted', async () => (await call(api1, 'POST', '/api/mail/send', { headers: { 'x-api-key': project.secretKey }, body: { to: 'x@example.com', subject, text: 't' } })).status === 200, 120_000, 20)
      .then(() => until('the mail delivered', async () => resend.sentBy('re_bench').some((m) => m.subject === subject), 120_000, 20))
      .then(() => Date.now() - t0);
    const [h, w, m] = await Promise.all([healthy, writes, mailed]);
    stop = true;
    await load;
    row(run, `${h} ms`, `${w} ms`, `${m} ms`, refused);
    await sleep(3000);
  }
  for (const w of workers) await w.kill('SIGTERM');

  // 4. A SIGKILLed worker's jobs: how long until another worker holds them (or they are done).
  out.push('', '### Jobs of a SIGKILLed worker: wait until another worker takes them (fake provider 3 s, so jobs are held)\n', '| WORKER_DEAD_AFTER_MS | jobs held by the killed worker | taken over after | all its mails delivered after |', '|---|---|---|---|');
  resend.latencyMs = 3000;
  for (const dead of ['2000', '5000', '10000']) {
    await sql`DELETE FROM graphile_worker._private_jobs`.execute(ctx.db.admin);
    await sql`DELETE FROM mail_logs`.execute(ctx.db.admin);
    const victim = await startWorker(`victim-${dead}`, { WORKER_DEAD_AFTER_MS: dead, WORKER_CONCURRENCY: '4' });
    const survivor = await startWorker(`survivor-${dead}`, { WORKER_DEAD_AFTER_MS: dead, WORKER_CONCURRENCY: '4' });
    // Steady state: a worker sweeps only once its own heartbeat has held for a whole WORKER_DEAD_AFTER_MS.
    await sleep(Number(dead) + 500);
    // One at a time: concurrent sends of a project are group-committed into fewer jobs.
    for (let i = 0; i < 16; i++) await sendMail(ctx, record, { to: 'k@example.com', subject: `kill ${dead} ${i}`, text: 't' });
    const held = await until('the victim to hold jobs', async () => {
      const r = (await sql<{ id: string }>`SELECT id::text FROM graphile_worker._private_jobs WHERE locked_by = ANY(${victim.workerIds})`.execute(ctx.db.admin)).rows;
      return r.length >= 1 && r.map((x) => x.id);
    }, 60_000, 10);
    await victim.kill('SIGKILL');
    const t0 = Date.now();
    await until('the takeover', async () => {
      const still = await count(sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE id::text = ANY(${held}) AND (locked_by IS NULL OR locked_by = ANY(${victim.workerIds}))`);
      return still === 0;
    }, 120_000, 20);
    const takeover = Date.now() - t0;
    await until('all mails delivered', async () => (await queued()) === 0, 120_000, 20);
    row(dead, held.length, `${takeover} ms`, `${Date.now() - t0} ms`);
    await survivor.kill('SIGTERM');
  }
  console.log(`\n${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end`);
} finally {
  await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
  await booted.close();
  await proxy.close();
  await resend.close();
  await embedded?.destroy().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
