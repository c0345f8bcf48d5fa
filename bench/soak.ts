/**
 * Soak benchmark (`npm run bench -- soak`): one Plinth node under mixed traffic for
 * BENCH_SOAK_MINUTES (30) at BENCH_SOAK_RATE (0.5) of the mix's measured peak, reporting every
 * minute whether anything grows. docs/benchmarks.md, "soak", has the method and a run.
 *
 * The node runs in a child process as `npm start` runs it (src/main.ts: embedded PostgreSQL,
 * the app, the in-process job worker and webhook dispatcher, METRICS_PORT's loopback listener),
 * rate limits off, mail to the dev outbox, its own temp dir. This process only measures:
 *   - every BENCH_SOAK_SAMPLE_SECONDS (5): the node's RSS (/proc/<pid>/status), its /metrics
 *     (prom-client's defaults: V8 heap used, open file descriptors, and the event-loop delay
 *     histogram, which each scrape reads and resets), and the database's connections
 *     (pg_stat_activity, this process's own excluded) and how many of them wait on a lock or
 *     on I/O (`wait_event_type`, summed over the minute);
 *   - per minute: the CPU time of the node's process and of its PostgreSQL (bench/lib/proc-cpu.ts);
 *     the share of the minute in which the machine stalled on I/O (/proc/pressure/io, "some");
 *     the machine's steal time (/proc/stat) and a canary, the CPU ms this process spends on a
 *     fixed piece of work, so a machine that got slower is told from work that grew; PostgreSQL's
 *     blocks found in and read into shared buffers and rows returned (pg_stat_database);
 *     RSS and heap as the median of the minute's samples, file descriptors and
 *     connections as their maximum, event-loop delay p99 as the worst 5-s p99 and its max;
 *     per kind of request, the count, failures and p99 (from the load processes).
 * Load, from separate processes: BENCH_SOAK_STREAMS (1 000) realtime streams on raw sockets
 * (bench/lib/sse-load.ts) subscribed to a realtime collection that gets BENCH_SOAK_LIVE_WRITES
 * (5) creates a second, and, open-loop at a fixed rate (bench/lib/paced-load.ts): the data
 * API's create (each followed, once the load's own 1 000 newest documents exist, by the purge of
 * its oldest, `DELETE …?hard=true`: the collection keeps its size, as an app's does at steady
 * state, instead of growing sevenfold in 30 minutes, which made every list read more rows and
 * PostgreSQL's CPU per minute rise with it), list (filter + range + sort, 20 of 10 000), get by
 * id and update; sign-in
 * (password login of 20 users); mail send; the three-step upload (request, 16-byte PUT,
 * confirm; each step counts); image renders of a 1-megapixel JPEG (random width and quality,
 * so mostly real renders). Each kind's rate is BENCH_SOAK_RATE × its rate in a calibration of
 * BENCH_SOAK_PEAK_SECONDS (20) with every kind closed-loop at once (data 4 connections each,
 * mail and upload 4, sign-in and render 2): half the peak of this mix, not of each kind alone.
 *
 * The node runs with --expose-gc: at the end of each minute the bench asks it (IPC) for a full
 * collection and the heap still used after it, what a leak would keep (the scraped heap moves
 * by half between collections).
 *
 * Verdict, after BENCH_SOAK_WARMUP_MINUTES (3): of the minutes after it, the median of the last
 * third against the median of the first third. None of the node's and PostgreSQL's CPU seconds
 * per minute, RSS, heap after GC, heap used, file descriptors, connections (more than one
 * more), event-loop p99 and each kind's request p99 (more than 5 ms more) may grow by more
 * than 10 %: a leak is steady growth, while one minute's spike (a pool filling in a burst, a
 * neighbour's load on a shared machine) is not; the least-squares trend is printed beside. A
 * latency's rise with the node's CPU and memory flat is the machine's (its load average is
 * printed the same way) and only warned about, unless BENCH_SOAK_STRICT=1: at a fixed offered
 * load, work that grows shows in the CPU per minute whatever the neighbours do, and kept
 * memory in the heap. Every kind keeps at least 90 % of its offered rate; no request fails
 * (calibration and warm-up included), no stream closes, and every stream gets every realtime
 * event. Exit 1 when any of it fails. BENCH_SOAK_WINDOW_SECONDS (60) shortens the "minute" for
 * trying the bench.
 */
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import sharp from 'sharp';
import { sql } from 'kysely';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { freePort } from '../src/db/embedded.js';
import { createCollection } from '../src/modules/collections/service.js';
import { startMetricsListener } from '../src/modules/metrics/listener.js';
import { startDispatcher } from '../src/modules/webhooks/dispatcher.js';
import { buildApp } from '../src/server.js';
import { startWorker } from '../src/worker/runner.js';
import { makeCollection, makeOperator, makeProject, USERS_FIELDS } from '../test/helpers/fixtures.js';
import type { LoadRequest } from './lib/load.js';
import { PacedLoad, type KindWindow, type PacedKind } from './lib/paced-load.js';
import { clusterCpuUs, processCpuUs } from './lib/proc-cpu.js';
import { seedProducts } from './lib/products.js';
import { SseLoad } from './lib/sse-load.js';

const num = (name: string, fallback: number) => (process.env[name] === undefined || process.env[name] === '' ? fallback : Number(process.env[name]));
const MINUTES = num('BENCH_SOAK_MINUTES', 30);
const RATE = num('BENCH_SOAK_RATE', 0.5);
const WARMUP = num('BENCH_SOAK_WARMUP_MINUTES', 3);
const STREAMS = num('BENCH_SOAK_STREAMS', 1000);
const LIVE_WRITES = num('BENCH_SOAK_LIVE_WRITES', 5);
const PEAK_SECONDS = num('BENCH_SOAK_PEAK_SECONDS', 20);
const SAMPLE_SECONDS = num('BENCH_SOAK_SAMPLE_SECONDS', 5);
const WINDOW_SECONDS = num('BENCH_SOAK_WINDOW_SECONDS', 60);
/** Latency rises fail the verdict even when the node's CPU and memory stayed flat (a quiet machine). */
const STRICT = process.env.BENCH_SOAK_STRICT === '1';
const DOCS = 10_000;
/** The soak's own documents kept before each create purges the oldest: the collection stays at DOCS + this. */
const RETIRE_AFTER = 1000;
const USERS = 20;
const PASSWORD = 'soak password 1';
/** Growth allowed after the warm-up, and the latency floor under which a rise is noise. */
const GROWTH = 0.1;
const LATENCY_FLOOR_MS = 5;

interface Started {
  base: string;
  pk: string;
  sk: string;
  projectId: string;
  ids: string[];
  metricsPort: number;
  databaseUrl: string;
  clusterDir: string;
}

/** The node: started and stopped as src/main.ts does, seeded, then waits for 'close'. */
async function serve(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-soak-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    ...process.env, PLINTH_DATA_DIR: dir, PORT: String(port), PUBLIC_URL: base, RATE_LIMIT_SCALE: '0', LOG_LEVEL: 'warn',
    MAIL_MONTHLY_LIMIT: '-1', IMAGE_TRANSFORMS_PER_MINUTE: '1000000', REALTIME_MAX_STREAMS_PER_PROJECT: String(STREAMS + 10),
  });
  const booted = await boot(config);
  const { ctx } = booted;
  const app = await buildApp(ctx);
  const worker = await startWorker(ctx);
  const dispatcher = startDispatcher(ctx);
  const metrics = await startMetricsListener(ctx, 0);
  await app.listen({ port, host: '127.0.0.1' });
  const p = await makeProject(ctx, await makeOperator(ctx, { plan: 'pro' }), 'soak');
  const { ids } = await seedProducts(ctx, p.id, { docs: DOCS, indexes: [{ fields: ['category', 'price'] }] });
  await createCollection(ctx, p.id, 'pro', { name: 'live', fields: [{ key: 'title', type: 'String' }, { key: 'n', type: 'Number' }], realtime: true });
  await makeCollection(ctx, p.id, 'users', USERS_FIELDS);
  await sql`ANALYZE documents`.execute(ctx.db.admin);
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await app.close();
    await dispatcher.stop();
    await worker.stop();
    await metrics.close();
    await booted.close();
    rmSync(dir, { recursive: true, force: true });
    if (process.connected) process.send!('closed', () => process.exit(0));
    else process.exit(0);
  };
  // 'gc': a full collection, then the heap still in use (what a leak keeps); the bench asks once
  // a window, so every window's loop delay includes one such pause alike
  process.on('message', (m) => {
    if (m === 'gc') {
      (globalThis as { gc?: () => void }).gc?.();
      process.send!({ live: process.memoryUsage().heapUsed });
    } else void close();
  });
  process.once('disconnect', close); // the measuring process died: stop, and leave no PostgreSQL behind
  const started: Started = { base, pk: p.publishableKey, sk: p.secretKey, projectId: p.id, ids, metricsPort: metrics.port, databaseUrl: booted.embedded?.url ?? config.databaseUrl!, clusterDir: path.join(config.dataDir, 'pg') };
  process.send!(started);
}

// ---------------------------------------------------------------- measuring

interface Sample {
  rss: number;
  heap: number;
  fds: number;
  loopP99: number;
  loopMax: number;
  pg: number;
  /** Backends of the database waiting at the sample: on a heavyweight lock, on I/O (wait_event_type Lock, IO). */
  waitLock: number;
  waitIo: number;
}

interface Minute {
  minute: number;
  rss: number;
  heap: number;
  live: number;
  load: number;
  /** CPU seconds in the window: the node's process, and its PostgreSQL (postmaster and backends). */
  cpuNode: number;
  cpuPg: number;
  /** Backends seen waiting on a lock / on I/O, summed over the window's samples. */
  waitLock: number;
  waitIo: number;
  /** Share of the window in which some task of the machine stalled on I/O (/proc/pressure/io), %. */
  ioStall: number;
  /** Share of the machine's CPU time the hypervisor gave to others (/proc/stat "steal"), %. */
  steal: number;
  /** CPU ms this process spent on a fixed piece of work at the window's end: the machine's speed. */
  canary: number;
  /** PostgreSQL's blocks found in / read into shared buffers, and rows returned, in the window. */
  blksHit: number;
  blksRead: number;
  tupReturned: number;
  fds: number;
  loopP99: number;
  loopMax: number;
  pg: number;
  events: number;
  kinds: Record<string, KindWindow>;
}

/** Microseconds in which some task of the machine stalled on I/O (PSI, Linux 4.20+); 0 without it. */
function ioStallUs(): number {
  try {
    return Number(/^some .* total=(\d+)/m.exec(readFileSync('/proc/pressure/io', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The machine's steal and total CPU ticks (/proc/stat, first line). */
function cpuTicks(): { steal: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return { steal: f[7] ?? 0, total: f.reduce((a, b) => a + b, 0) };
}

/**
 * CPU ms of a fixed piece of work (SHA-256 over 4 MB, 8 times): if it grows while the load is
 * fixed, the machine got slower (a neighbour on the host, a lower clock), not Plinth's work.
 */
const CANARY_INPUT = Buffer.alloc(4 * 1048576, 7);
function canaryMs(): number {
  const before = process.cpuUsage();
  for (let i = 0; i < 8; i++) createHash('sha256').update(CANARY_INPUT).digest();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** The values of the default metrics this bench reads (no labels on these). */
async function scrape(port: number): Promise<{ heap: number; fds: number; loopP99: number; loopMax: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const value = (name: string) => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : NaN;
  };
  return {
    heap: value('nodejs_heap_size_used_bytes'),
    fds: value('process_open_fds'),
    loopP99: value('nodejs_eventloop_lag_p99_seconds') * 1000,
    loopMax: value('nodejs_eventloop_lag_max_seconds') * 1000,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MB = (n: number) => (n / 1048576).toFixed(0);
const loadavg = () => os.loadavg().map((l) => l.toFixed(2)).join(' / ');
const fmt = (n: number) => n.toLocaleString('en-US').replace(/,/g, ' ');

/** Least-squares slope of ys over 0, 1, 2, …: growth per minute. */
function slope(ys: number[]): number {
  const n = ys.length;
  if (n < 2) return 0;
  const mx = (n - 1) / 2;
  const my = mean(ys);
  let num = 0;
  let den = 0;
  ys.forEach((y, x) => {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  });
  return num / den;
}

async function uploadImage(base: string, sk: string): Promise<string> {
  const headers = { 'x-api-key': sk, 'content-type': 'application/json' };
  const jpeg = await sharp({ create: { width: 1000, height: 1000, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).jpeg().toBuffer();
  const asked = (await (await fetch(`${base}/api/storage/upload-request`, { method: 'POST', headers, body: JSON.stringify({ filename: 'photo.jpg', contentType: 'image/jpeg', size: jpeg.length }) })).json()) as { data: { signedUrl: string; filePath: string } };
  const put = await fetch(asked.data.signedUrl, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: new Uint8Array(jpeg) });
  if (put.status !== 200) throw new Error(`image PUT answered ${put.status}`);
  const confirmed = await fetch(`${base}/api/storage/upload-confirm`, { method: 'POST', headers, body: JSON.stringify({ filePath: asked.data.filePath, size: jpeg.length }) });
  if (confirmed.status !== 200) throw new Error(`image confirm answered ${confirmed.status}`);
  return `/api/storage/render/${asked.data.filePath}`;
}

/** The kinds of the mix: connections for the calibration, requests made as a client would. */
function mix(s: Started, imagePath: string): PacedKind[] {
  const rand = (n: number) => Math.floor(Math.random() * n);
  const many = (make: () => LoadRequest) => Array.from({ length: 500 }, make);
  const sk = { 'x-api-key': s.sk };
  const listQs = () => `category=c${rand(10)}&price_gte=1000&price_lt=9000&sort=-price&limit=20`;
  return [
    { name: 'create + delete', connections: 4, headers: sk, retire: RETIRE_AFTER, variants: many(() => ({ method: 'POST', path: '/api/data/products', body: JSON.stringify({ name: 'soak', price: rand(10000), category: `c${rand(10)}`, stock: 1 }) })) },
    { name: 'list', connections: 4, headers: sk, variants: many(() => ({ path: `/api/data/products?${listQs()}` })) },
    { name: 'get', connections: 4, headers: sk, variants: many(() => ({ path: `/api/data/products/${s.ids[rand(s.ids.length)]}` })) },
    { name: 'update', connections: 4, headers: sk, variants: many(() => ({ method: 'PATCH', path: `/api/data/products/${s.ids[rand(s.ids.length)]}`, body: JSON.stringify({ stock: rand(100) }) })) },
    { name: 'sign-in', connections: 2, headers: { 'x-api-key': s.pk }, variants: Array.from({ length: USERS }, (_, i) => ({ method: 'POST', path: '/api/userAuth/login', body: JSON.stringify({ email: `soak${i}@example.com`, password: PASSWORD }) })) },
    { name: 'mail', connections: 4, headers: sk, variants: [{ method: 'POST', path: '/api/mail/send', body: JSON.stringify({ to: 'soak@example.com', subject: 'Soak', html: '<p>Hello</p>' }) }] },
    { name: 'upload', connections: 4, headers: sk, upload: true },
    { name: 'render', connections: 2, variants: many(() => ({ path: `${imagePath}?width=${64 + rand(449)}&format=webp&quality=${30 + rand(61)}` })) },
  ];
}

async function main(): Promise<void> {
  const loadStart = loadavg();
  console.log(`load average at start (1 / 5 / 15 min): ${loadStart}; ${os.availableParallelism()} CPUs`);
  const server = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--expose-gc', '--import', 'tsx'], env: { ...process.env, BENCH_SOAK_ROLE: 'server' } });
  const s = await new Promise<Started>((resolve, reject) => {
    server.once('message', (m) => resolve(m as Started));
    server.once('exit', (code) => reject(new Error(`the node exited with ${code} while starting`)));
  });
  const pid = server.pid!;
  const liveHeap = () => new Promise<number>((resolve) => {
    server.once('message', (m) => resolve((m as { live: number }).live));
    server.send('gc');
  });
  const db = new pg.Client({ connectionString: s.databaseUrl });
  await db.connect();
  for (let i = 0; i < USERS; i++) {
    const r = await fetch(`${s.base}/api/userAuth/signup`, { method: 'POST', headers: { 'x-api-key': s.pk, 'content-type': 'application/json' }, body: JSON.stringify({ email: `soak${i}@example.com`, password: PASSWORD }) });
    if (r.status !== 201) throw new Error(`sign-up answered ${r.status}: ${await r.text()}`);
  }
  const imagePath = await uploadImage(s.base, s.sk);
  const kinds = mix(s, imagePath);
  const live: PacedKind = { name: 'realtime write', connections: 4, rate: LIVE_WRITES, headers: { 'x-api-key': s.sk }, variants: [{ method: 'POST', path: '/api/data/live', body: JSON.stringify({ title: 'b', n: 1 }) }] };

  const streams = await SseLoad.open({ url: s.base, collection: 'live', specs: Array.from({ length: STREAMS }, () => ({ project: s.projectId, apiKey: s.pk })), processes: Math.max(1, Math.ceil(STREAMS / 2500)), writes: 0 });
  console.log(`${STREAMS} realtime streams open`);

  // Calibration: every kind closed-loop at once; the first 3 s discarded.
  let failures = 0;
  const failureSamples: string[] = [];
  const countFailures = (w: Record<string, KindWindow>) => {
    for (const [name, k] of Object.entries(w)) {
      failures += k.failures;
      for (const sample of k.samples) if (failureSamples.length < 10) failureSamples.push(`${name}: ${sample}`);
    }
  };
  const calibration = await PacedLoad.start(s.base, kinds);
  await sleep(3000);
  countFailures(await calibration.window());
  await sleep(PEAK_SECONDS * 1000);
  const peak = await calibration.window();
  countFailures(peak);
  countFailures(await calibration.stop());
  const rates = Object.fromEntries(kinds.map((k) => [k.name, Math.max(0.2, Math.round((RATE * peak[k.name]!.count * 10) / PEAK_SECONDS) / 10)]));
  console.log(`\npeak of the mix (${PEAK_SECONDS} s, every kind closed-loop at once; connections: ${kinds.map((k) => `${k.name} ${k.connections}`).join(', ')}):\n`);
  console.log('| kind | peak req/s | p99 ms | soak rate req/s |');
  console.log('|---|--:|--:|--:|');
  for (const k of kinds) console.log(`| ${k.name} | ${(peak[k.name]!.count / PEAK_SECONDS).toFixed(1)} | ${peak[k.name]!.p99.toFixed(1)} | ${rates[k.name]} |`);
  console.log(`| realtime write (fixed, to ${STREAMS} streams) | – | – | ${LIVE_WRITES} |`);
  await sleep(2000);

  // The soak.
  const soakKinds: PacedKind[] = [...kinds.map((k) => ({ ...k, connections: 16, rate: rates[k.name] })), live];
  const names = soakKinds.map((k) => k.name);
  const offered = Object.fromEntries(soakKinds.map((k) => [k.name, k.rate! * WINDOW_SECONDS]));
  console.log(`\n${MINUTES} windows of ${WINDOW_SECONDS} s at ${RATE} × the peak; warm-up ${WARMUP}. RSS and heap: the window's median sample; fds and PostgreSQL connections: its maximum; event-loop delay: the worst ${SAMPLE_SECONDS}-s p99 and the max. Per kind: requests · p99 ms · failures.\n`);
  console.log(`| min | load | I/O stall % | steal % | canary ms | PG waiting lock / IO | PG blocks hit / read k | PG rows returned k | CPU s node / PG | RSS MB | heap MB | heap after GC MB | fds | loop p99 / max ms | PG conns | events | ${names.join(' | ')} |`);
  console.log(`|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|${names.map(() => '--:').join('|')}|`);
  const minutes: Minute[] = [];
  let events0 = (await streams.status()).burst;
  let writesOk = 0;
  await scrape(s.metricsPort); // resets the loop histogram
  const load = await PacedLoad.start(s.base, soakKinds);
  const t0 = performance.now();
  const dbStats = async () => (await db.query<{ hit: string; read: string; ret: string }>('SELECT blks_hit AS hit, blks_read AS read, tup_returned AS ret FROM pg_stat_database WHERE datname = current_database()')).rows[0]!;
  const counters = async () => ({ node: processCpuUs(pid) ?? 0, pg: clusterCpuUs(s.clusterDir) ?? 0, io: ioStallUs(), ticks: cpuTicks(), db: await dbStats() });
  let cpu0 = await counters();
  for (let m = 1; m <= MINUTES; m++) {
    const samples: Sample[] = [];
    while (performance.now() - t0 < m * WINDOW_SECONDS * 1000) {
      const wait = Math.min(SAMPLE_SECONDS * 1000, t0 + m * WINDOW_SECONDS * 1000 - performance.now());
      await sleep(Math.max(0, wait));
      const [metrics, conns] = await Promise.all([
        scrape(s.metricsPort),
        db.query<{ n: number; lock: number; io: number }>(`SELECT count(*)::int AS n, count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS lock,
          count(*) FILTER (WHERE wait_event_type = 'IO')::int AS io FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`),
      ]);
      const r = conns.rows[0]!;
      samples.push({ rss: rssOf(pid), ...metrics, pg: r.n, waitLock: r.lock, waitIo: r.io });
    }
    const w = await load.window();
    const cpu1 = await counters();
    countFailures(w);
    writesOk += w['realtime write']!.count - w['realtime write']!.failures;
    const events1 = (await streams.status()).burst;
    const row: Minute = {
      minute: m,
      rss: median(samples.map((x) => x.rss)),
      heap: median(samples.map((x) => x.heap)),
      cpuNode: (cpu1.node - cpu0.node) / 1e6,
      cpuPg: (cpu1.pg - cpu0.pg) / 1e6,
      waitLock: samples.reduce((n, x) => n + x.waitLock, 0),
      waitIo: samples.reduce((n, x) => n + x.waitIo, 0),
      ioStall: ((cpu1.io - cpu0.io) / 1e6 / WINDOW_SECONDS) * 100,
      steal: ((cpu1.ticks.steal - cpu0.ticks.steal) / Math.max(1, cpu1.ticks.total - cpu0.ticks.total)) * 100,
      canary: canaryMs(),
      blksHit: Number(cpu1.db.hit) - Number(cpu0.db.hit),
      blksRead: Number(cpu1.db.read) - Number(cpu0.db.read),
      tupReturned: Number(cpu1.db.ret) - Number(cpu0.db.ret),
      live: await liveHeap(),
      load: os.loadavg()[0]!,
      fds: Math.max(...samples.map((x) => x.fds)),
      loopP99: Math.max(...samples.map((x) => x.loopP99)),
      loopMax: Math.max(...samples.map((x) => x.loopMax)),
      pg: Math.max(...samples.map((x) => x.pg)),
      events: events1 - events0,
      kinds: w,
    };
    events0 = events1;
    cpu0 = cpu1;
    minutes.push(row);
    const cells = names.map((n) => `${fmt(w[n]!.count)} · ${w[n]!.p99.toFixed(1)} · ${w[n]!.failures}`);
    console.log(`| ${m}${m <= WARMUP ? ' (warm-up)' : ''} | ${row.load.toFixed(1)} | ${row.ioStall.toFixed(1)} | ${row.steal.toFixed(1)} | ${row.canary.toFixed(0)} | ${row.waitLock} / ${row.waitIo} | ${fmt(Math.round(row.blksHit / 1000))} / ${fmt(Math.round(row.blksRead / 1000))} | ${fmt(Math.round(row.tupReturned / 1000))} | ${row.cpuNode.toFixed(1)} / ${row.cpuPg.toFixed(1)} | ${MB(row.rss)} | ${MB(row.heap)} | ${MB(row.live)} | ${row.fds} | ${row.loopP99.toFixed(1)} / ${row.loopMax.toFixed(0)} | ${row.pg} | ${fmt(row.events)} | ${cells.join(' | ')} |`);
  }
  const last = await load.stop();
  countFailures(last);
  const tables = await db.query<{ name: string; size: string; live: string; dead: string }>(`SELECT schemaname || '.' || relname AS name, pg_size_pretty(pg_total_relation_size(relid)) AS size,
    n_live_tup AS live, n_dead_tup AS dead FROM pg_stat_user_tables ORDER BY pg_total_relation_size(relid) DESC LIMIT 8`);
  console.log(`\nthe largest tables at the end: ${tables.rows.map((t) => `${t.name} ${t.size} (${fmt(Number(t.live))} live, ${fmt(Number(t.dead))} dead rows)`).join('; ')}`);
  writesOk += last['realtime write']!.count - last['realtime write']!.failures;
  await sleep(3000);
  const st = await streams.status();
  const eventsWanted = writesOk * STREAMS;
  const eventsGot = st.burst;
  await streams.close();

  // The verdict.
  const problems: string[] = [];
  const warnings: string[] = [];
  const notes: string[] = [];
  if (failures > 0) problems.push(`${failures} requests failed (calibration and warm-up included); first: ${failureSamples.join(' / ')}`);
  if (st.failures > 0) problems.push(`${st.failures} realtime streams failed or closed`);
  if (eventsGot !== eventsWanted) problems.push(`realtime: ${fmt(eventsGot)} events delivered of ${fmt(eventsWanted)} (${fmt(writesOk)} writes × ${STREAMS} streams)`);
  const after = minutes.slice(WARMUP);
  const third = Math.floor(after.length / 3);
  if (third < 1) {
    problems.push(`too short to judge growth: ${after.length} window(s) after a warm-up of ${WARMUP} (3 at least)`);
  } else {
    notes.push(`growth: the medians of minutes ${after[0]!.minute}–${after[third - 1]!.minute} against those of ${after[after.length - third]!.minute}–${after[after.length - 1]!.minute}; trend: least squares over minutes ${after[0]!.minute}–${after[after.length - 1]!.minute}`);
    /** Whether it grew; a latency's rise is a failure only when the node's own cost rose too (or BENCH_SOAK_STRICT=1). */
    const grow = (label: string, pick: (m: Minute) => number, unit: (n: number) => string, floor: number, latency = false) => {
      const first = median(after.slice(0, third).map(pick));
      const end = median(after.slice(-third).map(pick));
      const trend = (slope(after.map(pick)) * (600 / WINDOW_SECONDS)) / first;
      const line = `${label}: ${unit(first)} → ${unit(end)} (${(((end - first) / first) * 100).toFixed(1)} %; trend ${(trend * 100).toFixed(1)} % per 10 min)`;
      const grew = end > first * (1 + GROWTH) && end - first > floor;
      if (!grew) notes.push(line);
      else if (latency && !costGrew && !STRICT) warnings.push(`${line}: rose more than 10 %, but neither the node's nor PostgreSQL's CPU per minute did, nor its memory: the shared machine's, not counted`);
      else problems.push(`${line}: grew more than 10 %`);
      return grew;
    };
    const cpuS = (n: number) => `${n.toFixed(1)} s/min`;
    let costGrew = false;
    costGrew = grow('node CPU', (m) => m.cpuNode, cpuS, 0) || costGrew;
    costGrew = grow('PostgreSQL CPU', (m) => m.cpuPg, cpuS, 0) || costGrew;
    costGrew = grow('RSS', (m) => m.rss, (n) => `${MB(n)} MB`, 0) || costGrew;
    costGrew = grow('V8 heap after a full GC', (m) => m.live, (n) => `${MB(n)} MB`, 0) || costGrew;
    costGrew = grow('V8 heap used (as scraped)', (m) => m.heap, (n) => `${MB(n)} MB`, 0) || costGrew;
    grow('open file descriptors', (m) => m.fds, String, 1);
    grow('PostgreSQL connections', (m) => m.pg, String, 1);
    // latencies move with whatever else the machine runs: its load average, the same way
    grow('(not judged) load average, 1 min', (m) => m.load, (n) => n.toFixed(1), Infinity);
    grow('(not judged) the machine canary, CPU ms for fixed work', (m) => m.canary, (n) => `${n.toFixed(0)} ms`, Infinity);
    grow('(not judged) PostgreSQL rows returned per minute', (m) => m.tupReturned, (n) => fmt(Math.round(n)), Infinity);
    const ms = (n: number) => `p99 ${n.toFixed(1)} ms`;
    grow('event-loop delay', (m) => m.loopP99, ms, LATENCY_FLOOR_MS, true);
    for (const n of names) grow(n, (m) => m.kinds[n]!.p99, ms, LATENCY_FLOOR_MS, true);
    for (const n of names) {
      const slow = after.filter((m) => m.kinds[n]!.count < 0.9 * offered[n]!);
      if (slow.length) problems.push(`${n}: below 90 % of the offered ${fmt(Math.round(offered[n]!))} requests per window in minute(s) ${slow.map((m) => m.minute).join(', ')}`);
    }
  }
  const loadEnd = loadavg();
  console.log(`\nload average at the end (1 / 5 / 15 min): ${loadEnd}; realtime: ${fmt(eventsGot)} of ${fmt(eventsWanted)} events delivered, ${st.failures} streams failed; requests failed: ${failures}\n`);
  for (const n of notes) console.log(`- ${n}`);
  for (const w of warnings) console.log(`- warning: ${w}`);
  for (const p of problems) console.log(`- **${p}**`);
  console.log(`\n**Verdict: ${problems.length ? 'FAIL' : warnings.length ? 'PASS, with warnings' : 'PASS'}**`);

  await db.end();
  await new Promise<void>((resolve) => {
    server.once('message', () => resolve());
    server.send('close');
  });
  process.exit(problems.length ? 1 : 0);
}

if (process.env.BENCH_SOAK_ROLE === 'server') {
  await serve();
} else {
  await main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
