/**
 * Image transformations (sharp): sizes, fit and formats; EXIF orientation applied and metadata
 * stripped; cached derivatives (ETag, 304, hit/miss) invalidated with their original; and the
 * threats: a decompression bomb (a 60-megapixel PNG) refused from its header before any pixel
 * is decoded, SVG never rasterised, renders rate-limited per project, and a project that
 * accepts signed transformations only refuses unsigned or altered ones.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { statementsReading, upload } from './helpers.js';

let env: TestEnv;
let p: TestProject;
beforeAll(async () => {
  env = await createTestEnv({ IMAGE_TRANSFORMS_PER_MINUTE: '6' });
  p = await makeProject(env.ctx);
});
afterAll(() => env.close());

const renderUrl = (file: string, q: string) => `/api/storage/render/${file.split('/').map(encodeURIComponent).join('/')}?${q}`;
const get = (url: string, headers: Record<string, string> = {}) => env.app.inject({ method: 'GET', url, headers });

/** A PNG that is only a header: 10000 × 6000 pixels declared, no pixel data that could decode. */
function pngBomb(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', Buffer.alloc(16)), chunk('IEND', Buffer.alloc(0))]);
}

describe('renderings', () => {
  let jpeg: string;
  beforeAll(async () => {
    // Stored 400 × 200 (red left, blue right) with EXIF orientation 6: shown upright as 200 × 400.
    const red = await sharp({ create: { width: 200, height: 200, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const bytes = await sharp({ create: { width: 400, height: 200, channels: 3, background: '#0000ff' } })
      .composite([{ input: red, left: 0, top: 0 }])
      .jpeg()
      .withMetadata({ orientation: 6, exif: { IFD0: { Copyright: 'secret gps owner' } } })
      .toBuffer();
    jpeg = (await upload(env, p.sk, 'photo.jpg', bytes, 'image/jpeg')).filePath;
  });

  it('a JPEG with EXIF rotation comes out upright, resized, without its metadata', async () => {
    const r = await get(renderUrl(jpeg, 'width=100&format=png'));
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('image/png');
    const meta = await sharp(r.rawPayload).metadata();
    expect([meta.width, meta.height]).toEqual([100, 200]);
    expect(meta.orientation).toBeUndefined();
    expect(meta.exif).toBeUndefined();
    // Upright: the red half (left when stored) is now on top.
    const { data } = await sharp(r.rawPayload).raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => Array.from(data.subarray((y * 100 + x) * 3, (y * 100 + x) * 3 + 3));
    const [r0, , b0] = at(50, 10);
    const [r1, , b1] = at(50, 190);
    expect(r0! > 200 && b0! < 60).toBe(true); // red on top
    expect(r1! < 60 && b1! > 200).toBe(true); // blue below
  });

  it('fit and formats: cover crops to the box; auto gives WebP to a client that takes it, JPEG otherwise', async () => {
    const cover = await get(renderUrl(jpeg, 'width=64&height=64&fit=cover&format=jpeg&quality=50'));
    expect((await sharp(cover.rawPayload).metadata()).width).toBe(64);
    expect(cover.headers['content-type']).toBe('image/jpeg');
    const webp = await get(renderUrl(jpeg, 'width=50'), { accept: 'image/avif,image/webp,*/*' });
    expect(webp.headers['content-type']).toBe('image/webp');
    expect(webp.headers.vary).toBe('Accept');
    const plain = await get(renderUrl(jpeg, 'width=50'), { accept: '*/*' });
    expect(plain.headers['content-type']).toBe('image/jpeg');
    expect(plain.headers.etag).not.toBe(webp.headers.etag);
  });

  it('cached: a miss, then hits; If-None-Match answers 304; deleting the original removes its derivatives', async () => {
    const q = await makeProject(env.ctx);
    const bytes = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#00ff00' } }).jpeg().toBuffer();
    const file = (await upload(env, q.sk, 'g.jpg', bytes, 'image/jpeg')).filePath;
    const first = await get(renderUrl(file, 'width=30&format=webp'));
    expect(first.headers['x-plinth-cache']).toBe('miss');
    expect(first.headers['cache-control']).toBe('public, no-cache');
    const second = await get(renderUrl(file, 'width=30&format=webp'));
    expect(second.headers['x-plinth-cache']).toBe('hit');
    expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
    expect((await get(renderUrl(file, 'width=30&format=webp'), { 'if-none-match': String(first.headers.etag) })).statusCode).toBe(304);
    const [projectId, name] = file.split('/');
    const derived = path.join(env.config.storage.localDir, projectId!, '_derived', name!.slice(0, 24));
    expect(existsSync(derived)).toBe(true);
    await env.app.inject({ method: 'DELETE', url: '/api/storage/file', headers: q.sk, payload: { path: file } });
    expect(existsSync(derived)).toBe(false);
    expect((await get(renderUrl(file, 'width=30&format=webp'))).statusCode).toBe(404);
  });

  it('refuses parameters out of range (400), never rendering something else', async () => {
    expect((await get(renderUrl(jpeg, 'width=99999'))).json().code).toBe('transform_invalid');
    expect((await get(renderUrl(jpeg, 'fit=stretch'))).statusCode).toBe(400);
    expect((await get(renderUrl(jpeg, 'format=svg'))).statusCode).toBe(400);
  });

  // Issue 46 item 6: these used to stop at the querystring schema's enum (400 validation_failed).
  it.each([
    'format=bmp',
    'format=svg',
    'format=gif',
    'format=WEBP',
    'format=png&format=webp',
    'fit=stretch',
    'fit=fill',
    'fit=cover&fit=inside',
    'width=30&fit=stretch&format=bmp',
  ])('%s answers the documented 400 transform_invalid', async (q) => {
    const r = await get(renderUrl(jpeg, q));
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ success: false, code: 'transform_invalid' });
  });
});

describe('threats', () => {
  it('a 60-megapixel PNG is refused from its header, before it is decoded (422)', async () => {
    const q = await makeProject(env.ctx);
    const file = (await upload(env, q.sk, 'bomb.png', pngBomb(10_000, 6_000), 'image/png')).filePath;
    const r = await get(renderUrl(file, 'width=100'));
    // Its pixel data is 16 zero bytes: had it been decoded, the answer would be "could not be read".
    expect(r.statusCode).toBe(422);
    expect(r.json().code).toBe('image_too_large');
  });

  it('SVG is never rasterised, whatever its declared type (415)', async () => {
    const q = await makeProject(env.ctx);
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
    for (const type of ['image/svg+xml', 'image/png']) {
      const file = (await upload(env, q.sk, 'x.svg', svg, type)).filePath;
      const r = await get(renderUrl(file, 'width=5'));
      expect(r.statusCode).toBe(415);
      expect(r.json().code).toBe('image_not_supported');
    }
  });

  it('renders (cache misses) are limited per project; cached ones are not', async () => {
    const q = await makeProject(env.ctx);
    const bytes = await sharp({ create: { width: 50, height: 50, channels: 3, background: '#123456' } }).png().toBuffer();
    const file = (await upload(env, q.sk, 'r.png', bytes, 'image/png')).filePath;
    const codes = [];
    for (let w = 1; w <= 8; w++) codes.push((await get(renderUrl(file, `width=${w}`))).statusCode);
    expect(codes.slice(0, 6)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(codes.slice(6)).toEqual([429, 429]);
    expect((await get(renderUrl(file, 'width=1'))).statusCode).toBe(200);
  });

  it('signed transformations only: unsigned or altered ones are refused, the signed one renders', async () => {
    const q = await makeProject(env.ctx);
    await env.app.inject({ method: 'PUT', url: `/api/projects/${q.id}/files/settings`, headers: q.owner.auth, payload: { signedTransformsOnly: true } });
    const bytes = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#abcdef' } }).png().toBuffer();
    const file = (await upload(env, q.sk, 's.png', bytes, 'image/png')).filePath;
    expect((await get(renderUrl(file, 'width=20'))).statusCode).toBe(403);
    const s = await env.app.inject({ method: 'POST', url: '/api/storage/download-url', headers: q.sk, payload: { path: file, transform: { width: 20, format: 'webp' } } });
    expect(s.statusCode).toBe(200);
    const u = new URL(s.json().data.url);
    expect(u.pathname).toContain('/api/storage/render/');
    expect((await get(u.pathname + u.search)).statusCode).toBe(200);
    u.searchParams.set('width', '2000');
    expect((await get(u.pathname + u.search)).statusCode).toBe(403);
    // The original itself stays public.
    expect((await get(`/api/storage/public/${file}`)).statusCode).toBe(200);
  });

  it("a private file's renderings need what its download needs", async () => {
    const q = await makeProject(env.ctx);
    const bytes = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#fedcba' } }).png().toBuffer();
    const req = await env.app.inject({ method: 'POST', url: '/api/storage/upload-request', headers: q.sk, payload: { filename: 'p.png', contentType: 'image/png', size: bytes.length, private: true } });
    const { signedUrl, filePath } = req.json().data;
    const u = new URL(signedUrl);
    await env.app.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': 'image/png' }, payload: bytes });
    await env.app.inject({ method: 'POST', url: '/api/storage/upload-confirm', headers: q.sk, payload: { filePath, size: bytes.length } });
    expect((await get(renderUrl(filePath, 'width=10'))).json().code).toBe('file_private');
    const ok = await get(renderUrl(filePath, 'width=10'), q.sk);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['cache-control']).toBe('private, no-cache');
    // A revalidation reads the file and its project's settings in one statement.
    const { result, statements } = await statementsReading(env, 'projects', () => get(renderUrl(filePath, 'width=10'), { ...q.sk, 'if-none-match': ok.headers.etag as string }));
    expect(result.statusCode).toBe(304);
    expect(statements.filter((s) => /from "files"/i.test(s))).toHaveLength(1);
    expect(statements.filter((s) => !/from "files"/i.test(s))).toEqual([]);
  });
});
