/** The upload flow on the local backend: request → PUT → confirm, delete, keys and quota. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { confirm, deleteFile, MB, onDisk, putSigned, requestUpload, storageUsed, upload } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
});
afterAll(() => env.close());

describe('upload-request', () => {
  it('answers a signed URL of 10 minutes and a <projectId>/<id>_<name> path', async () => {
    const res = await requestUpload(env, p.sk, { filename: 'my photo.png', contentType: 'image/png', size: 10 });
    expect(res.statusCode).toBe(200);
    const { signedUrl, filePath, expiresAt } = res.json().data;
    expect(filePath).toMatch(new RegExp(`^${p.id}/[0-9a-f]{24}_my_photo\\.png$`));
    expect(signedUrl).toContain(`${env.config.publicUrl}/api/storage/objects/${filePath}?`);
    expect(new Date(expiresAt).getTime() - env.clock.now().getTime()).toBe(600_000);
  });

  it.each([
    [{ contentType: 'a/b', size: 1 }],
    [{ filename: 'a', size: 1 }],
    [{ filename: 'a', contentType: 'a/b' }],
    [{ filename: 'a', contentType: 'a/b', size: 'ten' }],
    [{ filename: 'a', contentType: 'a/b', size: -1 }],
    [{ filename: '', contentType: 'a/b', size: 1 }],
  ])('missing or bad fields are 400 %j', async (body) => {
    const res = await requestUpload(env, p.sk, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('filename, contentType, and size are required.');
  });

  it('over 10 MB is 413', async () => {
    const res = await requestUpload(env, p.sk, { filename: 'big.bin', contentType: 'a/b', size: 10 * MB + 1 });
    expect(res.statusCode).toBe(413);
    expect(res.json().message).toBe('File size exceeds limit.');
  });

  it('beyond the remaining quota is 403 and charges nothing', async () => {
    const q = await makeProject(env.ctx);
    await upload(env, q.sk, 'a.bin', Buffer.alloc(9 * MB));
    await upload(env, q.sk, 'b.bin', Buffer.alloc(9 * MB));
    const res = await requestUpload(env, q.sk, { filename: 'c.bin', contentType: 'a/b', size: 3 * MB });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toBe('Internal storage limit exceeded.');
    expect(await storageUsed(env, q.id)).toBe(18 * MB);
  });

  it('needs a key (401) and, with a pk, a signed-in user (401)', async () => {
    const body = { filename: 'a', contentType: 'a/b', size: 1 };
    expect((await requestUpload(env, {}, body)).statusCode).toBe(401);
    expect((await requestUpload(env, { 'x-api-key': 'sk_live_nope' }, body)).statusCode).toBe(401);
    expect((await requestUpload(env, p.pk, body)).statusCode).toBe(401);
    expect((await requestUpload(env, { ...p.pk, authorization: 'Bearer junk' }, body)).statusCode).toBe(401);
  });
});

describe('confirm', () => {
  it('charges the quota once, however often it is confirmed', async () => {
    const q = await makeProject(env.ctx);
    const { res, filePath } = await upload(env, q.sk, 'x.txt', Buffer.from('hello world'), 'text/plain');
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toEqual({ path: filePath, url: `${env.config.publicUrl}/api/storage/public/${filePath}`, provider: 'internal' });
    const again = await confirm(env, q.sk, filePath, 11);
    expect(again.statusCode).toBe(200);
    expect(again.json().data.path).toBe(filePath);
    expect(await storageUsed(env, q.id)).toBe(11);
  });

  it('before the PUT is 409 not-ready, and a retry after the PUT succeeds', async () => {
    const req = await requestUpload(env, p.sk, { filename: 'late.bin', contentType: 'a/b', size: 4 });
    const { signedUrl, filePath } = req.json().data;
    const early = await confirm(env, p.sk, filePath, 4);
    expect(early.statusCode).toBe(409);
    expect(early.json().message).toBe('Uploaded file is not visible yet. Please retry confirmation.');
    expect((await putSigned(env, signedUrl, Buffer.from('abcd'), { 'content-type': 'a/b' })).statusCode).toBe(200);
    expect((await confirm(env, p.sk, filePath, 4)).statusCode).toBe(200);
  });

  it('a declared size different from the stored object is 400', async () => {
    const req = await requestUpload(env, p.sk, { filename: 's.bin', contentType: 'a/b', size: 4 });
    const { signedUrl, filePath } = req.json().data;
    await putSigned(env, signedUrl, Buffer.from('abcd'), { 'content-type': 'a/b' });
    const res = await confirm(env, p.sk, filePath, 5);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('Declared file size does not match uploaded file size.');
  });

  it('missing fields are 400; a never-requested path is 404', async () => {
    const res = await env.app.inject({ method: 'POST', url: '/api/storage/upload-confirm', headers: p.sk, payload: { size: 1 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('filePath and size are required.');
    const unknown = await confirm(env, p.sk, `${p.id}/${'a'.repeat(24)}_x.bin`, 1);
    expect(unknown.statusCode).toBe(404);
  });
});

describe('delete', () => {
  it('deletes, frees the quota in the same step, then 404s', async () => {
    const q = await makeProject(env.ctx);
    const { filePath } = await upload(env, q.sk, 'd.bin', Buffer.alloc(1000));
    expect(await storageUsed(env, q.id)).toBe(1000);
    const res = await deleteFile(env, q.sk, filePath);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: {}, message: 'File deleted successfully' });
    expect(await storageUsed(env, q.id)).toBe(0);
    expect(onDisk(env, filePath)).toBe(false);
    expect((await deleteFile(env, q.sk, filePath)).statusCode).toBe(404);
    expect((await deleteFile(env, q.sk, `${q.id}/${'b'.repeat(24)}_never.bin`)).statusCode).toBe(404);
  });

  it('401 without or with a bad key; 400 without a path', async () => {
    expect((await deleteFile(env, {}, `${p.id}/x`)).statusCode).toBe(401);
    expect((await deleteFile(env, { 'x-api-key': 'pk_live_bad' }, `${p.id}/x`)).statusCode).toBe(401);
    const res = await env.app.inject({ method: 'DELETE', url: '/api/storage/file', headers: p.sk, payload: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('File path is required.');
  });

  it('pk + user: files belong to that user, and only they may delete them with the pk', async () => {
    const alice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, 'a1a1a1a1a1a1a1a1a1a1a1a1')}` };
    const bob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, 'b2b2b2b2b2b2b2b2b2b2b2b2')}` };
    const { res, filePath } = await upload(env, alice, 'mine.txt', Buffer.from('alice'), 'text/plain');
    expect(res.statusCode).toBe(200);
    const row = await env.ctx.db.admin.selectFrom('files').select('owner_id').where('path', '=', filePath).executeTakeFirst();
    expect(row?.owner_id).toBe('a1a1a1a1a1a1a1a1a1a1a1a1');
    expect((await deleteFile(env, bob, filePath)).statusCode).toBe(404);
    expect((await deleteFile(env, p.pk, filePath)).statusCode).toBe(401);
    const sk = await upload(env, p.sk, 'server.txt', Buffer.from('x'), 'text/plain');
    expect((await deleteFile(env, alice, sk.filePath)).statusCode).toBe(404);
    expect((await deleteFile(env, alice, filePath)).statusCode).toBe(200);
  });
});
