/**
 * Resumable uploads in a real browser (Debian's Chromium driven by playwright-core) with
 * tus-js-client: a page on another origin uploads a 100 MB file as a signed-in user, its
 * connection is killed midway (the request aborted mid-body), the upload resumes from the
 * server's offset (HEAD), not from zero, and the file stored is the page's exact bytes; the page
 * then shows the thumbnail of another upload through the image transformation route. Skipped,
 * saying so, where /usr/bin/chromium is not installed.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeOperator, makeProject, makeUserToken, type TestProject } from '../helpers/fixtures.js';
import { launchChromium } from '../e2e/harness.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const SKIP = hasChromium ? '' : ` (SKIPPED: ${CHROMIUM} is not installed; apt-get install -y chromium)`;
if (!hasChromium) console.warn(`tus.browser.test.ts skipped: ${CHROMIUM} is not installed (apt-get install -y chromium)`);

const tusSource = readFileSync(createRequire(import.meta.url).resolve('tus-js-client').replace(/lib\.es5\/.*$|lib\/.*$|dist\/.*$/, 'dist/tus.min.js'), 'utf8');
const SIZE = 100 * 1024 * 1024;

let env: TestEnv;
let p: TestProject;
let api: string;
let pageServer: http.Server;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium) return;
  // Upload URLs (Location) are built from PUBLIC_URL: the port is chosen first.
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  api = `http://127.0.0.1:${port}`;
  env = await createTestEnv({ LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '100', PUBLIC_URL: api });
  p = await makeProject(env.ctx, await makeOperator(env.ctx, { plan: 'pro' }));
  await env.app.listen({ port, host: '127.0.0.1' });
  pageServer = http.createServer((req, res) => {
    if (req.url === '/tus.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(tusSource);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title><script src="/tus.js"></script>');
  });
  await new Promise<void>((r) => pageServer.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  if (!hasChromium) return;
  await browser.close();
  await new Promise((r) => pageServer.close(r));
  await env.close();
});

it(`uploads 100 MB with tus-js-client, survives a killed connection by resuming, and shows another upload's thumbnail${SKIP}`, async () => {
  if (!hasChromium) return;
  const token = await makeUserToken(env.ctx, p, 'a1a1a1a1a1a1a1a1a1a1a1a1');
  const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#2266aa' } }).png().toBuffer();
  const page = await browser.newPage();
  await page.goto(origin);
  const result = await page.evaluate(
    async ({ api, pk, token, size, png }) => {
      type TusReq = { getMethod(): string };
      type TusRes = { getHeader(name: string): string };
      type TusUpload = { start(): void; abort(): Promise<void> };
      const tus = (window as unknown as { tus: { Upload: new (file: Blob, opts: Record<string, unknown>) => TusUpload } }).tus;
      const headers = { 'x-api-key': pk, authorization: `Bearer ${token}` };
      const data = new Uint8Array(size);
      for (let i = 0; i < size; i += 65536) crypto.getRandomValues(data.subarray(i, Math.min(size, i + 65536)));
      const digest = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', data)), (b) => b.toString(16).padStart(2, '0')).join('');
      const offsets: number[] = [];
      let cutAt = 0;
      const upload = (file: Blob, name: string, type: string, cut: boolean) =>
        new Promise<{ path: string; url: string | null }>((resolve, reject) => {
          const u: TusUpload = new tus.Upload(file, {
            endpoint: `${api}/api/storage/tus`,
            headers,
            chunkSize: 16 * 1024 * 1024,
            retryDelays: [0, 500, 1000],
            metadata: { filename: name, filetype: type },
            storeFingerprintForResuming: false,
            onProgress: (sent: number) => {
              if (cut && !cutAt && sent > size / 2) {
                cutAt = sent;
                // The connection dies mid-PATCH; the app starts the same upload again.
                u.abort().then(() => setTimeout(() => u.start(), 300));
              }
            },
            onAfterResponse: (req: TusReq, res: TusRes) => {
              if (req.getMethod() === 'HEAD') offsets.push(Number(res.getHeader('Upload-Offset')));
            },
            onError: reject,
            onSuccess: (payload: { lastResponse: TusRes }) => {
              const path = decodeURIComponent(payload.lastResponse.getHeader('Plinth-File-Path'));
              resolve({ path, url: payload.lastResponse.getHeader('Plinth-File-Url') });
            },
          });
          u.start();
        });
      const big = await upload(new Blob([data]), 'big.bin', 'application/octet-stream', true);
      const image = await upload(new Blob([new Uint8Array(png)], { type: 'image/png' }), 'pic.png', 'image/png', false);
      const img = document.createElement('img');
      img.alt = 'thumbnail';
      img.src = `${image.url!.replace('/api/storage/public/', '/api/storage/render/')}?width=120&height=120&fit=cover`;
      document.body.append(img);
      await img.decode();
      return { big, digest, cutAt, offsets, thumb: [img.naturalWidth, img.naturalHeight] };
    },
    { api, pk: p.publishableKey, token, size: SIZE, png: Array.from(png) },
  );
  // Resumed from the server's offset: a HEAD after the cut answered bytes already stored.
  expect(result.cutAt).toBeGreaterThan(SIZE / 2);
  expect(result.offsets.length).toBeGreaterThanOrEqual(1);
  expect(result.offsets[0]).toBeGreaterThan(0);
  const stored = readFileSync(path.join(env.config.storage.localDir, result.big.path));
  expect(stored.length).toBe(SIZE);
  expect(createHash('sha256').update(stored).digest('hex')).toBe(result.digest);
  const row = await env.ctx.db.admin.selectFrom('files').select(['status', 'owner_id']).where('path', '=', result.big.path).executeTakeFirstOrThrow();
  expect(row).toEqual({ status: 'confirmed', owner_id: 'a1a1a1a1a1a1a1a1a1a1a1a1' });
  expect(result.thumb).toEqual([120, 120]);
  await page.close();
}, 180_000);
