/**
 * The s3 driver (real @aws-sdk/client-s3 + presigner) against an S3-compatible fake on
 * 127.0.0.1 that checks presigned signatures: platform bucket and a project's own bucket.
 */
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { FAKE_KEY, startFakeS3, type FakeS3 } from '../../fakes/s3.js';
import { confirm, deleteFile, grantUpload, storageUsed } from './helpers.js';

let env: TestEnv;
let s3: FakeS3;
let p: TestProject;

beforeAll(async () => {
  s3 = await startFakeS3({ now: () => env.clock.now() });
  await s3.createBucket('platform-bucket');
  await s3.createBucket('byo-bucket');
  env = await createTestEnv({
    STORAGE_DRIVER: 's3',
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.region,
    S3_BUCKET: 'platform-bucket',
    S3_ACCESS_KEY_ID: FAKE_KEY.accessKeyId,
    S3_SECRET_ACCESS_KEY: FAKE_KEY.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
    S3_PUBLIC_URL: 'https://cdn.example.com/files',
  });
  p = await makeProject(env.ctx);
});
afterAll(async () => {
  await env.close();
  await s3.close();
});

const grant = (headers: Record<string, string>, size: number, contentType = 'text/plain') => grantUpload(env, headers, size, contentType, 'f.txt');
const put = (url: string, body: string, ct = 'text/plain') => fetch(url, { method: 'PUT', headers: { 'content-type': ct }, body });
const exists = (bucket: string, key: string) =>
  s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(() => true, () => false);

describe('platform bucket', () => {
  it('presigned PUT (content-length and content-type signed) → confirm by HEAD → public URL', async () => {
    const g = await grant(p.sk, 5);
    const u = new URL(g.signedUrl);
    expect(u.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host');
    expect(u.searchParams.get('X-Amz-Expires')).toBe('600');
    expect((await put(g.signedUrl, 'hello')).status).toBe(200);
    const res = await confirm(env, p.sk, g.filePath, 5);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ path: g.filePath, url: `https://cdn.example.com/files/${g.filePath}`, provider: 'internal' });
    expect(await storageUsed(env, p.id)).toBe(5);
  });

  it('the store refuses another size, another type, or an expired URL', async () => {
    const g = await grant(p.sk, 5);
    expect((await put(g.signedUrl, 'hello!')).status).toBe(403);
    expect((await put(g.signedUrl, 'hello', 'text/html')).status).toBe(403);
    env.clock.advance(601_000);
    expect((await put(g.signedUrl, 'hello')).status).toBe(403);
    expect(await exists('platform-bucket', g.filePath)).toBe(false);
    expect((await confirm(env, p.sk, g.filePath, 5)).statusCode).toBe(409);
  });

  it('delete removes the object and refunds; again is 404', async () => {
    const q = await makeProject(env.ctx);
    const g = await grant(q.sk, 3);
    await put(g.signedUrl, 'abc');
    await confirm(env, q.sk, g.filePath, 3);
    expect((await deleteFile(env, q.sk, g.filePath)).statusCode).toBe(200);
    expect(await exists('platform-bucket', g.filePath)).toBe(false);
    expect(await storageUsed(env, q.id)).toBe(0);
    expect((await deleteFile(env, q.sk, g.filePath)).statusCode).toBe(404);
  });
});

describe("a project's own bucket", () => {
  it('is stored encrypted, used for uploads, answers url:null + warning, and skips the platform quota', async () => {
    const q = await makeProject(env.ctx);
    const secret = 'S3RVER';
    const patch = await env.app.inject({
      method: 'PATCH',
      url: `/api/projects/${q.id}/storage`,
      headers: q.owner.auth,
      payload: { bucket: 'byo-bucket', region: s3.region, endpoint: s3.endpoint, accessKeyId: FAKE_KEY.accessKeyId, secretAccessKey: secret, forcePathStyle: true },
    });
    expect(patch.statusCode).toBe(200);
    expect(patch.body).not.toContain('secretAccessKey"');
    expect(patch.json().data.bucket).toMatchObject({ bucket: 'byo-bucket', hasSecretAccessKey: true });
    const row = await env.ctx.db.admin.selectFrom('projects').select(['secrets']).where('id', '=', q.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row.secrets)).not.toContain(`"${secret}"`);
    expect(row.secrets.storageSecretAccessKey?.encrypted).toBeTruthy();

    const g = await grant(q.sk, 4);
    expect(g.signedUrl).toContain('/byo-bucket/');
    expect((await put(g.signedUrl, 'byo!')).status).toBe(200);
    const res = await confirm(env, q.sk, g.filePath, 4);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ path: g.filePath, url: null, provider: 'external' });
    expect(res.json().data.warning).toMatch(/public URL/);
    expect(await exists('byo-bucket', g.filePath)).toBe(true);
    expect(await storageUsed(env, q.id)).toBe(0);

    // Project deletion empties its prefix in the own bucket too.
    const del = await env.app.inject({ method: 'DELETE', url: `/api/projects/${q.id}`, headers: q.owner.auth });
    expect(del.statusCode).toBe(200);
    const left = await s3.client.send(new ListObjectsV2Command({ Bucket: 'byo-bucket', Prefix: `${q.id}/` }));
    expect(left.KeyCount ?? 0).toBe(0);
    expect(env.logs.join('\n')).not.toContain(secret + '"');
  });

  it('null / {enabled:false} goes back to platform storage; bad settings are 400', async () => {
    const q = await makeProject(env.ctx);
    const bad = await env.app.inject({ method: 'PATCH', url: `/api/projects/${q.id}/storage`, headers: q.owner.auth, payload: { bucket: 'x' } });
    expect(bad.statusCode).toBe(400);
    await env.app.inject({
      method: 'PATCH',
      url: `/api/projects/${q.id}/storage`,
      headers: q.owner.auth,
      payload: { bucket: 'byo-bucket', region: s3.region, endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true, publicUrl: 'https://byo.example.com' },
    });
    const g1 = await grant(q.sk, 2);
    await put(g1.signedUrl, 'hi');
    expect((await confirm(env, q.sk, g1.filePath, 2)).json().data.url).toBe(`https://byo.example.com/${g1.filePath}`);
    const off = await env.app.inject({ method: 'PATCH', url: `/api/projects/${q.id}/storage`, headers: q.owner.auth, payload: { enabled: false } });
    expect(off.statusCode).toBe(200);
    expect(off.json().data.bucket).toBeNull();
    const g2 = await grant(q.sk, 2);
    expect(g2.signedUrl).toContain('/platform-bucket/');
  });

  it('unreadable bucket credentials are a 502 on upload-request, even after the bucket was used', async () => {
    const q = await makeProject(env.ctx);
    const bucket = { bucket: 'byo-bucket', region: s3.region, endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true };
    await env.app.inject({ method: 'PATCH', url: `/api/projects/${q.id}/storage`, headers: q.owner.auth, payload: bucket });
    expect((await grant(q.sk, 2)).signedUrl).toContain('/byo-bucket/');
    await sql`UPDATE projects SET secrets = jsonb_set(secrets, '{storageSecretAccessKey,tag}', to_jsonb(repeat('0', 32)))
      WHERE id = ${q.id}`.execute(env.ctx.db.admin);
    await env.ctx.bus.publish({ type: 'project_changed', id: q.id });
    const res = await env.app.inject({ method: 'POST', url: '/api/storage/upload-request', headers: q.sk, payload: { filename: 'f.txt', contentType: 'text/plain', size: 2 } });
    expect(res.statusCode).toBe(502);
    expect(res.json().message).toMatch(/credentials cannot be read/);
  });

  it('deleting a file whose bucket cannot be reached is a 503 with Retry-After, and the file stays for a retry', async () => {
    const q = await makeProject(env.ctx);
    const bucket = { bucket: 'byo-bucket', region: s3.region, endpoint: 'http://127.0.0.1:1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true };
    expect((await env.app.inject({ method: 'PATCH', url: `/api/projects/${q.id}/storage`, headers: q.owner.auth, payload: bucket })).statusCode).toBe(200);
    const id = 'f'.repeat(24);
    const path = `${q.id}/${id}_gone.txt`;
    await sql`INSERT INTO files (project_id, id, path, size, content_type, provider, status, created_at, confirmed_at)
      VALUES (${q.id}, ${id}, ${path}, 3, 'text/plain', 'external', 'confirmed', now(), now())`.execute(env.ctx.db.admin);
    const res = await deleteFile(env, q.sk, path);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json().code).toBe('storage_unavailable');
    const row = await env.ctx.db.admin.selectFrom('files').select('id').where('path', '=', path).executeTakeFirst();
    expect(row).toEqual({ id });
  });

  it('an upload still on platform storage confirms after the project moved to a bucket that cannot be used', async () => {
    const q = await makeProject(env.ctx);
    const g = await grant(q.sk, 3);
    expect(g.signedUrl).toContain('/platform-bucket/');
    expect((await put(g.signedUrl, 'old')).status).toBe(200);
    const bucket = { bucket: 'byo-bucket', region: s3.region, endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true };
    await env.app.inject({ method: 'PATCH', url: `/api/projects/${q.id}/storage`, headers: q.owner.auth, payload: bucket });
    await sql`UPDATE projects SET secrets = jsonb_set(secrets, '{storageSecretAccessKey,tag}', to_jsonb(repeat('0', 32)))
      WHERE id = ${q.id}`.execute(env.ctx.db.admin);
    await env.ctx.bus.publish({ type: 'project_changed', id: q.id });
    const res = await confirm(env, q.sk, g.filePath, 3);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ path: g.filePath, provider: 'internal' });
    expect(await storageUsed(env, q.id)).toBe(3);
  });
});
