/**
 * Threat: a private file read by someone it was not given to. A private file (the project's
 * default, or set per file) is refused without a signature, with an expired one, or with
 * another file's; a signed URL from the secret key or the owner, the secret key itself and the
 * owner's Bearer token read it, with Range, ETag and If-None-Match as for public files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { statementsReading, upload } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let alice: Record<string, string>;
let bob: Record<string, string>;
beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  alice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, 'a1a1a1a1a1a1a1a1a1a1a1a1')}` };
  bob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, 'b2b2b2b2b2b2b2b2b2b2b2b2')}` };
});
afterAll(() => env.close());

const fileUrl = (path: string) => `/api/storage/public/${path.split('/').map(encodeURIComponent).join('/')}`;
const get = (url: string, headers: Record<string, string> = {}) => env.app.inject({ method: 'GET', url, headers });
const signed = async (headers: Record<string, string>, path: string, expiresIn?: number) => {
  const r = await env.app.inject({ method: 'POST', url: '/api/storage/download-url', headers, payload: { path, ...(expiresIn && { expiresIn }) } });
  return r;
};
const localPart = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

async function setDefault(project: TestProject, value: boolean) {
  const r = await env.app.inject({ method: 'PUT', url: `/api/projects/${project.id}/files/settings`, headers: project.owner.auth, payload: { private: value } });
  expect(r.statusCode).toBe(200);
  expect(r.json().data.files.private).toBe(value);
}

describe('a project whose files are private by default', () => {
  let path: string;
  let other: string;
  beforeAll(async () => {
    await setDefault(p, true);
    const res = await upload(env, alice, 'diary.txt', Buffer.from('dear diary, 0123456789'), 'text/plain');
    expect(res.res.statusCode).toBe(200);
    expect(res.res.json().data.url).toBeNull();
    expect(res.res.json().data.warning).toMatch(/private/);
    path = res.filePath;
    other = (await upload(env, p.sk, 'other.txt', Buffer.from('another file'), 'text/plain')).filePath;
  });

  it('refuses the file without a signature (403 file_private)', async () => {
    const r = await get(fileUrl(path));
    expect(r.statusCode).toBe(403);
    expect(r.json().code).toBe('file_private');
    expect((await get(fileUrl(path), bob)).statusCode).toBe(403);
  });

  it('serves it on the owner\'s signed URL, with Range, ETag and If-None-Match', async () => {
    const s = await signed(alice, path);
    expect(s.statusCode).toBe(200);
    expect(s.json().data.private).toBe(true);
    const url = localPart(s.json().data.url);
    const full = await get(url);
    expect(full.statusCode).toBe(200);
    expect(full.body).toBe('dear diary, 0123456789');
    expect(full.headers['cache-control']).toBe('private, no-cache');
    const part = await get(url, { range: 'bytes=5-9' });
    expect(part.statusCode).toBe(206);
    expect(part.body).toBe('diary');
    expect((await get(url, { 'if-none-match': String(full.headers.etag) })).statusCode).toBe(304);
  });

  it('refuses an expired signature', async () => {
    const url = localPart((await signed(p.sk, path, 60)).json().data.url);
    env.clock.advance(61_000);
    const r = await get(url);
    expect(r.statusCode).toBe(403);
    expect(r.json().code).toBe('download_url_expired');
  });

  it("refuses another file's signature, and a tampered expiry", async () => {
    const u = new URL((await signed(p.sk, other)).json().data.url);
    const r = await get(`${fileUrl(path)}${u.search}`);
    expect(r.statusCode).toBe(403);
    expect(r.json().code).toBe('download_url_invalid');
    const mine = new URL((await signed(p.sk, path)).json().data.url);
    mine.searchParams.set('expires', String(Number(mine.searchParams.get('expires')) + 3600));
    expect((await get(mine.pathname + mine.search)).statusCode).toBe(403);
  });

  it("reads the file and its project's settings in one statement per download (the owner's token checked against them)", async () => {
    const { result, statements } = await statementsReading(env, 'projects', () => get(fileUrl(path), { authorization: alice.authorization! }));
    expect(result.statusCode).toBe(200);
    expect(result.body).toBe('dear diary, 0123456789');
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/from "files"/i);
  });

  it("serves it to the secret key and to its owner's Bearer token, not to another user's", async () => {
    expect((await get(fileUrl(path), p.sk)).statusCode).toBe(200);
    expect((await get(fileUrl(path), { authorization: alice.authorization! })).statusCode).toBe(200);
    expect((await get(fileUrl(path), { authorization: bob.authorization! })).statusCode).toBe(403);
    expect((await get(fileUrl(path), p.pk)).statusCode).toBe(403);
    const q = await makeProject(env.ctx);
    expect((await get(fileUrl(path), q.sk)).statusCode).toBe(403);
  });

  it("issues signed URLs to the owner only: another user's file is not found (404)", async () => {
    expect((await signed(bob, path)).statusCode).toBe(404);
    expect((await signed(alice, other)).statusCode).toBe(404);
  });

  it('one file made public is served to anyone; back to the default is private again', async () => {
    const r = await env.app.inject({ method: 'PATCH', url: '/api/storage/file', headers: alice, payload: { path, private: false } });
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toEqual({ path, private: false });
    expect((await get(fileUrl(path))).statusCode).toBe(200);
    expect((await env.app.inject({ method: 'PATCH', url: '/api/storage/file', headers: bob, payload: { path, private: true } })).statusCode).toBe(404);
    await env.app.inject({ method: 'PATCH', url: '/api/storage/file', headers: alice, payload: { path, private: null } });
    expect((await get(fileUrl(path))).statusCode).toBe(403);
  });

  it('the console lists it as private, without a public URL, and previews it on a signed URL', async () => {
    const list = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/files`, headers: p.owner.auth });
    const item = list.json().data.items.find((i: { path: string }) => i.path === path);
    expect(item).toMatchObject({ private: true, url: null });
    const s = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/files/download-url`, headers: p.owner.auth, payload: { path } });
    expect((await get(localPart(s.json().data.url))).statusCode).toBe(200);
  });
});

describe('a public project (the default)', () => {
  it('serves files as before, and one uploaded private only on a signature', async () => {
    const q = await makeProject(env.ctx);
    const pub = await upload(env, q.sk, 'pub.txt', Buffer.from('hello'), 'text/plain');
    expect(pub.res.json().data.url).toMatch(/\/api\/storage\/public\//);
    const r = await get(fileUrl(pub.filePath));
    expect(r.statusCode).toBe(200);
    expect(r.headers['cache-control']).toBe('public, no-cache');
    const req = await env.app.inject({ method: 'POST', url: '/api/storage/upload-request', headers: q.sk, payload: { filename: 'secret.txt', contentType: 'text/plain', size: 6, private: true } });
    expect(req.statusCode).toBe(200);
    const { signedUrl, filePath } = req.json().data;
    const u = new URL(signedUrl);
    await env.app.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': 'text/plain' }, payload: 'secret' });
    await env.app.inject({ method: 'POST', url: '/api/storage/upload-confirm', headers: q.sk, payload: { filePath, size: 6 } });
    expect((await get(fileUrl(filePath))).statusCode).toBe(403);
  });
});
