/**
 * Threat: abusing the local backend's signed PUT URL — another size, type or path than was
 * signed, an edited or expired signature, a replay after confirm, or a broken upload that
 * leaves a partial file confirm would accept.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { confirm, grantUpload, onDisk, putSigned } from './helpers.js';

let env: TestEnv;
let p: TestProject;
beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
});
afterAll(() => env.close());

const grant = (size = 5, contentType = 'text/plain') => grantUpload(env, p.sk, size, contentType, 'g.txt');
const stored = (fp: string) => onDisk(env, fp);

describe('signed PUT', () => {
  it('accepts exactly what was signed', async () => {
    const g = await grant();
    const res = await putSigned(env, g.signedUrl, Buffer.from('hello'), { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(200);
    expect(stored(g.filePath)).toBe(true);
  });

  it('a body longer or shorter than the signed size is refused (Content-Length must match)', async () => {
    const g = await grant();
    for (const body of ['hello!', 'hell']) {
      const res = await putSigned(env, g.signedUrl, Buffer.from(body), { 'content-type': 'text/plain' });
      expect(res.statusCode).toBe(400);
    }
    expect(stored(g.filePath)).toBe(false);
  });

  it('another Content-Type than the signed one is refused', async () => {
    const g = await grant();
    const res = await putSigned(env, g.signedUrl, Buffer.from('hello'), { 'content-type': 'text/html' });
    expect(res.statusCode).toBe(400);
    expect(stored(g.filePath)).toBe(false);
  });

  it('an edited size, type, expiry, path or signature is 403', async () => {
    const g = await grant();
    const u = new URL(g.signedUrl);
    const variants: Array<(x: URL) => void> = [
      (x) => x.searchParams.set('size', '6'),
      (x) => x.searchParams.set('ct', 'text/html'),
      (x) => x.searchParams.set('expires', String(Number(x.searchParams.get('expires')) + 3600)),
      (x) => {
        const sig = x.searchParams.get('sig')!;
        x.searchParams.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
      },
      (x) => x.searchParams.delete('sig'),
      (x) => (x.pathname = x.pathname.replace(/_g\.txt$/, '_h.txt')),
    ];
    for (const edit of variants) {
      const x = new URL(u);
      edit(x);
      const body = x.searchParams.get('size') === '6' ? 'hello!' : 'hello';
      const ct = x.searchParams.get('ct') ?? 'text/plain';
      const res = await putSigned(env, x.toString(), Buffer.from(body), { 'content-type': ct });
      expect(res.statusCode, x.search).toBe(403);
    }
    expect(stored(g.filePath)).toBe(false);
  });

  it('expires after 10 minutes (ctx.clock)', async () => {
    const g = await grant();
    env.clock.advance(601_000);
    const res = await putSigned(env, g.signedUrl, Buffer.from('hello'), { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toBe('The upload URL has expired.');
  });

  it('cannot overwrite a confirmed file (replay of the URL)', async () => {
    const g = await grant();
    await putSigned(env, g.signedUrl, Buffer.from('hello'), { 'content-type': 'text/plain' });
    expect((await confirm(env, p.sk, g.filePath, 5)).statusCode).toBe(200);
    const res = await putSigned(env, g.signedUrl, Buffer.from('HACKD'), { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(409);
    const get = await env.app.inject({ method: 'GET', url: `/api/storage/public/${g.filePath}` });
    expect(get.body).toBe('hello');
  });

  it('a broken (truncated) upload leaves no file and no temp file', async () => {
    const g = await grant(1000);
    const u = new URL(g.signedUrl);
    const { default: http } = await import('node:http');
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (env.app.server.address() as { port: number }).port;
    await new Promise<void>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'PUT', path: u.pathname + u.search, headers: { 'content-type': 'text/plain', 'content-length': '1000' } });
      req.on('error', () => resolve());
      req.write(Buffer.alloc(400, 1));
      setTimeout(() => {
        req.destroy();
        setTimeout(resolve, 200);
      }, 100);
    });
    expect(stored(g.filePath)).toBe(false);
    // The aborted stream is cleaned up asynchronously: give it a moment on a busy machine.
    const tmp = path.join(env.config.storage.localDir, '.tmp');
    const leftovers = () => (existsSync(tmp) ? readdirSync(tmp) : []);
    for (let i = 0; i < 30 && leftovers().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(leftovers()).toEqual([]);
    expect((await confirm(env, p.sk, g.filePath, 1000)).statusCode).toBe(409);
  });
});
