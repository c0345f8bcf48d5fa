/** Public serving of the local backend (headers, Range, HEAD, 304) and CORS on the upload URL. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { putSigned, requestUpload, upload } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let url: string;
const content = Buffer.from('0123456789abcdefghij');

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  const { filePath } = await upload(env, p.sk, 'doc.txt', content, 'text/plain; charset=utf-8');
  url = `/api/storage/public/${filePath}`;
});
afterAll(() => env.close());

describe('public files', () => {
  it('GET serves the bytes with type, validators and caching headers', async () => {
    const res = await env.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(content)).toBe(true);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['content-length']).toBe('20');
    expect(res.headers.etag).toMatch(/^"[0-9a-f]{24}-14-[0-9a-f]+"$/);
    expect(new Date(String(res.headers['last-modified'])).getTime()).toBeGreaterThan(0);
    expect(res.headers['cache-control']).toBe('public, no-cache');
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('a deleted file does not linger in caches: every use revalidates, and the revalidation is a 404', async () => {
    const { filePath } = await upload(env, p.sk, 'gone.txt', Buffer.from('soon deleted'), 'text/plain');
    const first = await env.app.inject({ method: 'GET', url: `/api/storage/public/${filePath}` });
    expect(first.headers['cache-control']).toMatch(/\bno-cache\b/);
    expect(first.headers['cache-control']).not.toMatch(/max-age=[1-9]/);
    expect((await env.app.inject({ method: 'DELETE', url: '/api/storage/file', headers: p.sk, payload: { path: filePath } })).statusCode).toBe(200);
    const again = await env.app.inject({ method: 'GET', url: `/api/storage/public/${filePath}`, headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(404);
  });

  it('HEAD answers the headers without a body', async () => {
    const res = await env.app.inject({ method: 'HEAD', url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe('20');
    expect(res.body).toBe('');
  });

  it('Range: 206 with Content-Range, suffix ranges, and 416 when unsatisfiable', async () => {
    const r1 = await env.app.inject({ method: 'GET', url, headers: { range: 'bytes=2-5' } });
    expect(r1.statusCode).toBe(206);
    expect(r1.body).toBe('2345');
    expect(r1.headers['content-range']).toBe('bytes 2-5/20');
    const r2 = await env.app.inject({ method: 'GET', url, headers: { range: 'bytes=-3' } });
    expect(r2.body).toBe('hij');
    const r3 = await env.app.inject({ method: 'GET', url, headers: { range: 'bytes=15-' } });
    expect(r3.body).toBe('fghij');
    const r4 = await env.app.inject({ method: 'GET', url, headers: { range: 'bytes=50-60' } });
    expect(r4.statusCode).toBe(416);
    expect(r4.headers['content-range']).toBe('bytes */20');
  });

  it('If-None-Match / If-Modified-Since → 304; a stale If-Range gets the whole file', async () => {
    const first = await env.app.inject({ method: 'GET', url });
    const etag = String(first.headers.etag);
    expect((await env.app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } })).statusCode).toBe(304);
    expect((await env.app.inject({ method: 'GET', url, headers: { 'if-modified-since': String(first.headers['last-modified']) } })).statusCode).toBe(304);
    const stale = await env.app.inject({ method: 'GET', url, headers: { range: 'bytes=0-1', 'if-range': '"other"' } });
    expect(stale.statusCode).toBe(200);
  });

  it('unconfirmed and unknown files are 404', async () => {
    const req = await requestUpload(env, p.sk, { filename: 'pending.txt', contentType: 'text/plain', size: 2 });
    const { signedUrl, filePath } = req.json().data;
    await putSigned(env, signedUrl, Buffer.from('hi'), { 'content-type': 'text/plain' });
    expect((await env.app.inject({ method: 'GET', url: `/api/storage/public/${filePath}` })).statusCode).toBe(404);
    expect((await env.app.inject({ method: 'GET', url: `/api/storage/public/${p.id}/${'d'.repeat(24)}_x.txt` })).statusCode).toBe(404);
  });
});

describe('CORS on the upload URL', () => {
  it('preflight allows PUT, OPTIONS, GET, HEAD and content-type, content-length', async () => {
    const req = await requestUpload(env, p.sk, { filename: 'c.txt', contentType: 'text/plain', size: 1 });
    const u = new URL(req.json().data.signedUrl);
    const res = await env.app.inject({
      method: 'OPTIONS',
      url: u.pathname + u.search,
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const methods = String(res.headers['access-control-allow-methods']).split(/,\s*/);
    expect(methods).toEqual(expect.arrayContaining(['PUT', 'OPTIONS', 'GET', 'HEAD']));
    const headers = String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
    expect(headers).toEqual(expect.arrayContaining(['content-type', 'content-length']));
    const put = await putSigned(env, u.toString(), Buffer.from('x'), { 'content-type': 'text/plain', origin: 'https://app.example.com' });
    expect(put.statusCode).toBe(200);
    expect(put.headers['access-control-allow-origin']).toBe('https://app.example.com');
  });
});
