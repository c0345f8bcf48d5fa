/**
 * Storage benchmark (`npx tsx bench/storage.ts`): boots its own embedded PostgreSQL + app in a
 * temp dir on 127.0.0.1 and measures, in one run:
 *   1. upload-request + confirm round trips/s (object written to disk in between), the full
 *      three-step flow (with a 16-byte signed PUT), against the data API create (POST /api/data/:c,
 *      sk) at the same concurrency; if that route is absent, a plain INSERT-backed baseline
 *      (direct tenant-transaction inserts, no HTTP: a stricter baseline), and says so.
 *   2. a 10 MB upload through the local backend while sampling process RSS (must stay flat).
 * Prints a markdown table and exits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { freePort } from '../src/db/embedded.js';
import { objectId } from '../src/lib/ids.js';
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

/** Runs `fn` in CONCURRENCY loops for SECONDS; returns completed operations per second. */
async function rate(fn: () => Promise<void>): Promise<number> {
  const end = Date.now() + SECONDS * 1000;
  let done = 0;
  const loop = async () => {
    while (Date.now() < end) {
      await fn();
      done++;
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  return done / ((Date.now() - t0) / 1000);
}

const body16 = Buffer.alloc(16, 1);
async function fullUpload(): Promise<void> {
  const req = await post('/api/storage/upload-request', { filename: 'b.bin', contentType: 'application/octet-stream', size: 16 });
  if (req.status !== 200) throw new Error(`upload-request ${req.status}`);
  const put = await fetch(req.json.data!.signedUrl!, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: body16 });
  if (put.status !== 200) throw new Error(`PUT ${put.status}`);
  await put.arrayBuffer();
  const c = await post('/api/storage/upload-confirm', { filePath: req.json.data!.filePath, size: 16 });
  if (c.status !== 200) throw new Error(`confirm ${c.status}`);
}

/** upload-request + confirm; the object is written straight to disk in between (no HTTP PUT). */
async function requestAndConfirm(): Promise<void> {
  const req = await post('/api/storage/upload-request', { filename: 'r.bin', contentType: 'application/octet-stream', size: 16 });
  if (req.status !== 200) throw new Error(`upload-request ${req.status}`);
  const filePath = req.json.data!.filePath!;
  const file = path.join(config.storage.localDir, filePath);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, body16);
  const c = await post('/api/storage/upload-confirm', { filePath, size: 16 });
  if (c.status !== 200) throw new Error(`confirm ${c.status}`);
}

async function baseline(): Promise<{ label: string; run: () => Promise<void> }> {
  const col = await ctx.db.admin.insertInto('collections').values({ project_id: project.id, name: 'bench' }).returning('id').executeTakeFirstOrThrow();
  const probe = await post('/api/data/bench', { title: 'probe', n: 1 });
  if (probe.status === 200 || probe.status === 201) {
    return { label: 'data API create (POST /api/data/bench, sk)', run: async () => void (await post('/api/data/bench', { title: 'x', n: 1 })) };
  }
  const run = async () => {
    await ctx.db.tenant({ projectId: project.id, keyKind: 'secret' }, (tx) =>
      tx.insertInto('documents').values({ project_id: project.id, collection_id: col.id, id: objectId(), owner_id: null, data: JSON.stringify({ title: 'x' }) as never }).execute(),
    );
  };
  return { label: `plain INSERT baseline, no HTTP (data create route answered ${probe.status})`, run };
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
  await rate(fullUpload).catch(() => 0); // warm-up (also JIT and pool)
  // Interleaved rounds (the machine may be shared): medians of each measurement.
  const setup = await baseline();
  const rounds = { base: [] as number[], pairs: [] as number[], flows: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    rounds.base.push(await rate(setup.run));
    rounds.pairs.push(await rate(requestAndConfirm));
    rounds.flows.push(await rate(fullUpload));
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const base1 = { label: setup.label, rate: median(rounds.base) };
  const pairs = median(rounds.pairs);
  const flows = median(rounds.flows);
  const big = [await bigUpload(), await bigUpload(), await bigUpload(), await bigUpload(), await bigUpload()];
  const mb = (n: number) => (n / MB).toFixed(1);
  console.log(`Concurrency ${CONCURRENCY}, ${ROUNDS} interleaved rounds of ${SECONDS} s (medians), loopback, local backend.\n`);
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
