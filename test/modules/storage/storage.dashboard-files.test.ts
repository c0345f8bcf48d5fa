/**
 * The console's uploads and deletes (operator session on /api/projects/:projectId/files…):
 * the public three-step flow with the owner's rights, quota charged and refunded; another
 * operator's session reaches none of it (404) and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestProject } from '../../helpers/fixtures.js';
import { onDisk, putSigned, storageUsed, upload } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
});
afterAll(() => env.close());

const post = (url: string, payload: unknown, auth = p.owner.auth) => env.app.inject({ method: 'POST', url, headers: auth, payload: payload as object });

describe('operator upload and delete', () => {
  it('requests, PUTs, confirms, lists and deletes a file; the quota follows', async () => {
    const bytes = Buffer.from('\x89PNG fake image bytes');
    const req = await post(`/api/projects/${p.id}/files/upload-request`, { filename: 'logo.png', contentType: 'image/png', size: bytes.length });
    expect(req.statusCode).toBe(200);
    const { signedUrl, filePath } = req.json().data;
    expect(filePath.startsWith(`${p.id}/`)).toBe(true);
    expect((await putSigned(env, signedUrl, bytes, { 'content-type': 'image/png' })).statusCode).toBe(200);
    const conf = await post(`/api/projects/${p.id}/files/upload-confirm`, { filePath, size: bytes.length });
    expect(conf.statusCode).toBe(200);
    expect(conf.json().data).toMatchObject({ path: filePath, provider: 'internal' });
    expect(await storageUsed(env, p.id)).toBe(bytes.length);
    const list = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/files`, headers: p.owner.auth });
    expect(list.json().data.items[0]).toMatchObject({ path: filePath, size: bytes.length, contentType: 'image/png' });
    const del = await env.app.inject({ method: 'DELETE', url: `/api/projects/${p.id}/files`, headers: p.owner.auth, payload: { path: filePath } });
    expect(del.statusCode).toBe(200);
    expect(await storageUsed(env, p.id)).toBe(0);
    expect(onDisk(env, filePath)).toBe(false);
  });

  it('applies the public rules: bad fields 400, over 10 MB 413, paths of another project 403', async () => {
    expect((await post(`/api/projects/${p.id}/files/upload-request`, { filename: 'a' })).statusCode).toBe(400);
    expect((await post(`/api/projects/${p.id}/files/upload-request`, { filename: 'a', contentType: 'a/b', size: 11 * 1024 * 1024 })).statusCode).toBe(413);
    const other = await makeProject(env.ctx);
    const { filePath } = await upload(env, other.sk, 'x.bin', Buffer.from('x'));
    const res = await env.app.inject({ method: 'DELETE', url: `/api/projects/${p.id}/files`, headers: p.owner.auth, payload: { path: filePath } });
    expect(res.statusCode).toBe(403);
    expect(onDisk(env, filePath)).toBe(true);
  });

  it("another operator gets 404 on every file route and cannot delete the owner's file", async () => {
    const { filePath } = await upload(env, p.sk, 'keep.bin', Buffer.from('keep me'));
    const stranger = await makeOperator(env.ctx);
    const routes = [
      { method: 'POST', url: `/api/projects/${p.id}/files/upload-request`, payload: { filename: 'a', contentType: 'a/b', size: 1 } },
      { method: 'POST', url: `/api/projects/${p.id}/files/upload-confirm`, payload: { filePath, size: 7 } },
      { method: 'DELETE', url: `/api/projects/${p.id}/files`, payload: { path: filePath } },
    ] as const;
    for (const r of routes) {
      const res = await env.app.inject({ ...r, headers: stranger.auth } as never);
      expect(res.statusCode, r.url).toBe(404);
      expect(res.json().code).toBe('project_not_found');
    }
    expect(onDisk(env, filePath)).toBe(true);
  });
});
