/**
 * Storage benchmark (`npx tsx bench/storage.ts`): boots its own embedded PostgreSQL + app in a
 * temp dir on 127.0.0.1 and measures, in one run:
 *   1. upload-request + confirm round trips/s (object written to disk in between) and the full
 *      three-step flow (with a 16-byte signed PUT), against the data API create (POST /api/data/:c,
 *      sk) at the same concurrency; autocannon drives all three from a separate process
 *      (bench/lib/load.ts, the flows in bench/lib/upload-scenarios.ts).
 *   2. a 10 MB upload through the local backend while sampling process RSS (must stay flat).
 * Prints a markdown table and exits.
 */
import http from 'node:http';
import type { AppContext } from '../src/context.js';
import { freePort } from '../src/db/embedded.js';
import { makeCollection, makeOperator, makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';
import { load } from './lib/load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Connections to measure at: 50, the data benchmarks' load, and 16. */
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '50,16').split(',').map(Number);
const MB = 1024 * 1024;

// Signed upload URLs point at PUBLIC_URL, so the port is chosen before the app boots.
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
let secretKey = '';
let storageDir = '';
let sk: Record<string, string> = {};

async function post(url: string, body: unknown): Promise<{ status: number; json: { data?: Record<string, string> } }> {
  const r = await fetch(base + url, { method: 'POST', headers: sk, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as { data?: Record<string, string> } };
}

/** Flows per second of one flow, driven by autocannon in a child process (bench/lib/load.ts). */
async function rate(flow: 'create' | 'pairs' | 'full', connections: number): Promise<number> {
  const common = { url: base, connections, seconds: SECONDS, headers: { 'x-api-key': secretKey } };
  const r =
    flow === 'create'
      ? await load({ ...common, variants: [{ method: 'POST', path: '/api/data/bench', body: JSON.stringify({ title: 'x', n: 1 }) }] })
      : await load({ ...common, variants: [], uploads: { scenario: flow, storageDir } });
  if (r.non2xx || r.errors) throw new Error(`${flow}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return r.rps / (flow === 'create' ? 1 : flow === 'pairs' ? 2 : 3);
}

/** Streams a 10 MB body in 64 kB chunks to a signed URL while sampling RSS every 10 ms. */
async function bigUpload(): Promise<{ before: number; peak: number; after: number; ms: number; heapDelta: number }> {
  const size = 10 * MB;
  const req = await post('/api/storage/upload-request', { filename: 'big.bin', contentType: 'application/octet-stream', size });
  const u = new URL(req.json.data!.signedUrl!);
  global.gc?.();
  const before = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  let peak = before;
  let heapPeak = heapBefore;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.rss);
    heapPeak = Math.max(heapPeak, m.heapUsed + m.arrayBuffers);
  }, 5);
  const t0 = Date.now();
  await new Promise<void>((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, method: 'PUT', path: u.pathname + u.search, headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PUT ${res.statusCode}`))));
    });
    r.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!r.write(chunk)) return void r.once('drain', pump);
      }
      r.end();
    };
    pump();
  });
  const ms = Date.now() - t0;
  clearInterval(timer);
  const c = await post('/api/storage/upload-confirm', { filePath: req.json.data!.filePath, size });
  if (c.status !== 200) throw new Error(`confirm ${c.status}`);
  return { before, peak, after: process.memoryUsage().rss, ms, heapDelta: heapPeak - heapBefore };
}

/** Medians of interleaved rounds (the machine may be shared) at one concurrency. */
async function measure(connections: number) {
  const rounds = { create: [] as number[], pairs: [] as number[], full: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    for (const flow of ['create', 'pairs', 'full'] as const) rounds[flow].push(await rate(flow, connections));
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  return { connections, create: median(rounds.create), pairs: median(rounds.pairs), full: median(rounds.full) };
}

runBench('storage', { PUBLIC_URL: base, PORT: String(port) }, async ({ app, ctx, config }) => {
  await app.listen({ port, host: '127.0.0.1' });
  await setUp(ctx);
  storageDir = config.storage.localDir;
  await rate('full', CONCURRENCY[0]!); // warm-up (JIT, pools)
  const results = [];
  for (const c of CONCURRENCY) results.push(await measure(c));
  const big = [await bigUpload(), await bigUpload(), await bigUpload(), await bigUpload(), await bigUpload()];
  const mb = (n: number) => (n / MB).toFixed(1);
  console.log(`${ROUNDS} interleaved rounds of ${SECONDS} s per flow (medians), autocannon in a separate process, loopback, local backend.\n`);
  console.log('| connections | data API create (POST /api/data/bench, sk) | upload-request + confirm (object written to disk directly) | full upload: request + 16 B PUT + confirm |');
  console.log('|---|---|---|---|');
  const vs = (n: number, base: number) => `${n.toFixed(0)} /s (${(n / base).toFixed(2)}×)`;
  for (const r of results) console.log(`| ${r.connections} | ${r.create.toFixed(0)} req/s | ${vs(r.pairs, r.create)} | ${vs(r.full, r.create)} |`);
  console.log('\n| 10 MB upload | RSS before / peak / after | JS heap + buffers peak | time |');
  console.log('|---|---|---|---|');
  big.forEach((b, i) => console.log(`| #${i + 1} | ${mb(b.before)} / ${mb(b.peak)} / ${mb(b.after)} MB (peak +${mb(b.peak - b.before)} MB) | +${mb(b.heapDelta)} MB | ${b.ms} ms |`));
});

/** A pro project (1 GB of storage: the 10 MB uploads alone pass the free 20 MB) with a collection. */
async function setUp(ctx: AppContext): Promise<void> {
  const p = await makeProject(ctx, await makeOperator(ctx, { plan: 'pro' }), 'bench');
  secretKey = p.secretKey;
  sk = { ...p.sk, 'content-type': 'application/json' };
  await makeCollection(ctx, p.id, 'bench');
}
