/**
 * Files benchmark (`npx tsx bench/files.ts`, or `npm run bench -- files`): boots its own
 * embedded PostgreSQL + app and measures, autocannon in a separate process:
 *   1. a 1-megapixel JPEG to a 256-px WebP through the render route, cache miss (every request
 *      another quality, so another derivative) and cache hit: p50/p99 and requests/s, beside
 *      the data API's get-by-id measured at the same time, and alone (its rate with renders
 *      running must stay ≥ 0.8× of its rate without);
 *   2. throughput of a 100 MB resumable (tus) upload in 16 MB PATCHes vs a 10 MB presigned PUT
 *      (the three-step flow's largest file), MB/s.
 * Prints markdown tables and exits.
 */
import sharp from 'sharp';
import type { AppContext } from '../src/context.js';
import { freePort } from '../src/db/embedded.js';
import { makeCollection, makeOperator, makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';
import { load, type LoadResult } from './lib/load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const MB = 1024 * 1024;

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
let sk: Record<string, string> = {};
let docPath = '';
let imagePath = '';

const getById = (seconds = SECONDS) => load({ url: base, connections: CONNECTIONS, seconds, headers: sk, variants: [{ path: docPath }] });
const render = (miss: boolean) =>
  load({
    url: base,
    connections: 4,
    seconds: SECONDS,
    variants: miss
      ? Array.from({ length: 81 * 4 }, (_, i) => ({ path: `${imagePath}?width=${256 - (i % 4)}&format=webp&quality=${20 + Math.floor(i / 4)}` }))
      : [{ path: `${imagePath}?width=256&format=webp` }],
  });

async function post(url: string, body: unknown, headers = sk) {
  const r = await fetch(base + url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await r.json()) as { data: Record<string, string> };
}

async function setUp(ctx: AppContext): Promise<void> {
  const p = await makeProject(ctx, await makeOperator(ctx, { plan: 'pro' }), 'bench');
  sk = p.sk;
  await makeCollection(ctx, p.id, 'bench');
  // The data API answers the document itself (urBackend's shape), not an envelope.
  const doc = (await post('/api/data/bench', { title: 'x', n: 1 })) as unknown as { _id: string };
  docPath = `/api/data/bench/${doc._id}`;
  const jpeg = await sharp({ create: { width: 1000, height: 1000, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).jpeg().toBuffer();
  const req = await post('/api/storage/upload-request', { filename: 'photo.jpg', contentType: 'image/jpeg', size: jpeg.length });
  await fetch(req.data.signedUrl!, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: new Uint8Array(jpeg) });
  await post('/api/storage/upload-confirm', { filePath: req.data.filePath, size: jpeg.length });
  imagePath = `/api/storage/render/${req.data.filePath}`;
}

async function tusUpload(size: number): Promise<number> {
  const t0 = performance.now();
  const meta = `filename ${Buffer.from('big.bin').toString('base64')}`;
  const created = await fetch(`${base}/api/storage/tus`, { method: 'POST', headers: { ...sk, 'tus-resumable': '1.0.0', 'upload-length': String(size), 'upload-metadata': meta } });
  const url = created.headers.get('location')!;
  const chunk = new Uint8Array(16 * MB).fill(7);
  for (let at = 0; at < size; at += chunk.length) {
    const body = chunk.subarray(0, Math.min(chunk.length, size - at));
    const r = await fetch(url, { method: 'PATCH', headers: { ...sk, 'tus-resumable': '1.0.0', 'upload-offset': String(at), 'content-type': 'application/offset+octet-stream' }, body });
    if (r.status !== 204) throw new Error(`PATCH ${r.status}`);
  }
  return size / MB / ((performance.now() - t0) / 1000);
}

async function presignedUpload(size: number): Promise<number> {
  const t0 = performance.now();
  const req = await post('/api/storage/upload-request', { filename: 'b.bin', contentType: 'application/octet-stream', size });
  const put = await fetch(req.data.signedUrl!, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(size).fill(7) });
  if (put.status !== 200) throw new Error(`PUT ${put.status}`);
  await post('/api/storage/upload-confirm', { filePath: req.data.filePath, size });
  return size / MB / ((performance.now() - t0) / 1000);
}

const row = (name: string, r: LoadResult, note = '') => `| ${name} | ${r.rps.toFixed(0)} req/s${note} | ${r.p50} ms | ${r.p99} ms |`;

runBench('files', { PUBLIC_URL: base, PORT: String(port), IMAGE_TRANSFORMS_PER_MINUTE: '1000000', RATE_LIMIT_SCALE: '100' }, async ({ app, ctx }) => {
  await app.listen({ port, host: '127.0.0.1' });
  await setUp(ctx);
  await getById(2); // warm-up
  const alone = await getById();
  const [missWith, miss] = await Promise.all([getById(), render(true)]);
  await render(false); // warm the one derivative
  const [hitWith, hit] = await Promise.all([getById(), render(false)]);
  console.log(`${SECONDS} s per run, autocannon in a separate process, loopback, local backend; renders at 4 connections, get-by-id at ${CONNECTIONS}.\n`);
  console.log('| load | rate | p50 | p99 |');
  console.log('|---|---|---|---|');
  console.log(row('get-by-id alone', alone));
  console.log(row('1 MP JPEG → 256 px WebP, cache miss', miss));
  console.log(row('get-by-id beside the misses', missWith, ` (${(missWith.rps / alone.rps).toFixed(2)}× alone)`));
  console.log(row('1 MP JPEG → 256 px WebP, cache hit', hit));
  console.log(row('get-by-id beside the hits', hitWith, ` (${(hitWith.rps / alone.rps).toFixed(2)}× alone)`));
  const tus = [await tusUpload(100 * MB), await tusUpload(100 * MB)];
  const presigned = [await presignedUpload(10 * MB), await presignedUpload(10 * MB), await presignedUpload(10 * MB)];
  console.log('\n| upload | MB/s (runs) |');
  console.log('|---|---|');
  console.log(`| tus, 100 MB in 16 MB PATCHes | ${tus.map((x) => x.toFixed(0)).join(', ')} |`);
  console.log(`| presigned PUT, 10 MB (request + PUT + confirm) | ${presigned.map((x) => x.toFixed(0)).join(', ')} |`);
});
