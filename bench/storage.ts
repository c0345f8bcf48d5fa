/**
 * Storage benchmark (`npx tsx bench/storage.ts`): boots its own embedded PostgreSQL + app in a
 * temp dir on 127.0.0.1 and measures, in one run:
 *   1. upload-request + confirm round trips/s (object written to disk in between) and the full
 *      three-step flow (with a 16-byte signed PUT), against the data API create (POST /api/data/:c,
 *      sk) at the same concurrency; the clients run in a separate process (bench/lib/storage-client.ts).
 *   2. a 10 MB upload through the local backend while sampling process RSS (must stay flat).
 * Prints a markdown table and exits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { freePort } from '../src/db/embedded.js';
import { createProject } from '../src/modules/projects/service.js';
import { buildApp } from '../src/server.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const MB = 1024 * 1024;

const tmp = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-storage-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const config = loadConfig({ ...process.env, PLINTH_DATA_DIR: tmp, RATE_LIMIT_SCALE: '0', LOG_LEVEL: 'warn', PUBLIC_URL: base, PORT: String(port) });
const booted = await boot(config);
const { ctx } = booted;
const app = await buildApp(ctx);
await app.listen({ port, host: '127.0.0.1' });

const op = await ctx.db.admin
  .insertInto('operators')
  .values({ email: `bench${Date.now()}@example.com`, password_hash: 'x', name: 'bench', plan: 'pro', is_verified: true, ai_key: null })
  .returning(['id', 'plan'])
  .executeTakeFirstOrThrow();
const { project, secretKey } = await createProject(ctx, op, { name: 'bench' });
const sk = { 'x-api-key': secretKey, 'content-type': 'application/json' };

async function post(url: string, body: unknown): Promise<{ status: number; json: { data?: Record<string, string> } }> {
  const r = await fetch(base + url, { method: 'POST', headers: sk, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as { data?: Record<string, string> } };
}

/** Runs one client flow in a child process (CONCURRENCY loops, SECONDS); returns flows/s. */
function rate(flow: 'create' | 'pairs' | 'full'): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./lib/storage-client.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'] });
    child.once('message', (r) => resolve(r as number));
    child.once('exit', (code) => code && reject(new Error(`storage client exited with ${code}`)));
    child.send({ flow, base, secretKey, storageDir: config.storage.localDir, seconds: SECONDS, concurrency: CONCURRENCY });
  });
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

try {
  await ctx.db.admin.insertInto('collections').values({ project_id: project.id, name: 'bench' }).execute();
  await rate('full'); // warm-up (JIT, pools)
  // Interleaved rounds (the machine may be shared): medians of each measurement.
  const rounds = { base: [] as number[], pairs: [] as number[], flows: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    rounds.base.push(await rate('create'));
    rounds.pairs.push(await rate('pairs'));
    rounds.flows.push(await rate('full'));
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const base1 = { label: 'data API create (POST /api/data/bench, sk)', rate: median(rounds.base) };
  const pairs = median(rounds.pairs);
  const flows = median(rounds.flows);
  const big = [await bigUpload(), await bigUpload(), await bigUpload(), await bigUpload(), await bigUpload()];
  const mb = (n: number) => (n / MB).toFixed(1);
  console.log(`Concurrency ${CONCURRENCY}, ${ROUNDS} interleaved rounds of ${SECONDS} s (medians), clients in a separate process, loopback, local backend.\n`);
  console.log('| measurement | result |');
  console.log('|---|---|');
  console.log(`| ${base1.label} | ${base1.rate.toFixed(0)} req/s |`);
  console.log(`| upload-request + confirm round trips (object written to disk directly) | ${pairs.toFixed(0)} /s (${(pairs / base1.rate).toFixed(2)}× baseline) |`);
  console.log(`| full upload: request + 16 B PUT + confirm | ${flows.toFixed(0)} /s (${(flows / base1.rate).toFixed(2)}× baseline) |`);
  big.forEach((b, i) => console.log(`| 10 MB upload #${i + 1}: RSS before / peak / after | ${mb(b.before)} / ${mb(b.peak)} / ${mb(b.after)} MB (peak +${mb(b.peak - b.before)} MB; JS heap + buffers peak +${mb(b.heapDelta)} MB; ${b.ms} ms) |`));
} finally {
  await app.close();
  await booted.close();
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(0);
