/**
 * Resumable uploads on the S3 driver (@tus/s3-store: S3 multipart, parts of 8 MiB) against the
 * S3 fake, across two API nodes: cut mid-part on one node, resumed on the other, finished as a
 * normal file in the bucket; deleting it or letting an unfinished one expire leaves nothing in
 * the bucket (no multipart upload, no `.info`/`.part` objects) and gives the bytes back.
 */
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject } from '../../helpers/fixtures.js';
import { FAKE_KEY, startFakeS3, type FakeS3 } from '../../fakes/s3.js';
import { sanitiseFilename } from '../../../src/modules/storage/paths.js';
import { sweepTask } from '../../../src/modules/storage/sweep.js';
import { MB, storageUsed } from './helpers.js';
import { create, cutPatch, idOf, listen, offsetOf, patch, secondNode, uploadPath, type Node } from './tus-helpers.js';

let env: TestEnv;
let s3: FakeS3;
let a: string;
let b: Node;
const S3_ENV = () => ({
  STORAGE_DRIVER: 's3',
  S3_ENDPOINT: s3.endpoint,
  S3_REGION: s3.region,
  S3_BUCKET: 'platform-bucket',
  S3_ACCESS_KEY_ID: FAKE_KEY.accessKeyId,
  S3_SECRET_ACCESS_KEY: FAKE_KEY.secretAccessKey,
  S3_FORCE_PATH_STYLE: 'true',
  S3_PUBLIC_URL: 'https://cdn.example.com/files',
});

beforeAll(async () => {
  s3 = await startFakeS3({ now: () => env.clock.now() });
  await s3.createBucket('platform-bucket');
  env = await createTestEnv(S3_ENV());
  a = await listen(env.app);
  b = await secondNode(env, S3_ENV());
});
afterAll(async () => {
  await b.close();
  await env.close();
  await s3.close();
});

const keys = async () =>
  ((await s3.client.send(new ListObjectsV2Command({ Bucket: 'platform-bucket' }))).Contents ?? []).map((o) => o.Key!).sort();

it('a 20 MB upload cut at 30 % on node A resumes on B, cut at 70 %, finishes on A: the object is the exact bytes', async () => {
  const p = await makeProject(env.ctx, await makeOperator(env.ctx, { plan: 'pro' }));
  const bytes = randomBytes(20 * MB);
  const created = await create(a, p.sk, bytes.length, { filename: 'film.bin', filetype: 'video/mp4' });
  expect(created.status).toBe(201);
  const id = idOf(created);
  const path = await uploadPath(env, id);
  expect(await storageUsed(env, p.id)).toBe(bytes.length);

  await cutPatch(a, p.sk, id, 0, bytes, Math.floor(bytes.length * 0.3));
  const o1 = await offsetOf(b.base, p.sk, id);
  expect(o1).toBeLessThanOrEqual(Math.floor(bytes.length * 0.3));
  await cutPatch(b.base, p.sk, id, o1, bytes.subarray(o1), Math.floor(bytes.length * 0.7) - o1);
  const o2 = await offsetOf(a, p.sk, id);
  expect(o2).toBeGreaterThanOrEqual(o1);
  expect(o2).toBeLessThanOrEqual(Math.floor(bytes.length * 0.7));
  const last = await patch(a, p.sk, id, o2, bytes.subarray(o2));
  expect(last.status).toBe(204);
  expect(last.headers.get('plinth-file-url')).toBe(`https://cdn.example.com/files/${path}`);

  const obj = await s3.client.send(new GetObjectCommand({ Bucket: 'platform-bucket', Key: path }));
  expect(Buffer.from(await obj.Body!.transformToByteArray()).equals(bytes)).toBe(true);
  const row = await env.ctx.db.admin.selectFrom('files').select('status').where('path', '=', path).executeTakeFirstOrThrow();
  expect(row.status).toBe('confirmed');
  expect(await offsetOf(b.base, p.sk, id)).toBe(bytes.length);
  expect(await storageUsed(env, p.id)).toBe(bytes.length);

  expect((await env.app.inject({ method: 'DELETE', url: '/api/storage/file', headers: p.sk, payload: { path } })).statusCode).toBe(200);
  expect(await keys()).toEqual([]);
  expect(await storageUsed(env, p.id)).toBe(0);
});

it('an unfinished upload expires: multipart aborted, objects and session gone, bytes refunded', async () => {
  const p = await makeProject(env.ctx);
  const id = idOf(await create(a, p.sk, 6 * MB));
  expect((await patch(b.base, p.sk, id, 0, randomBytes(MB))).status).toBe(204);
  expect(await offsetOf(a, p.sk, id)).toBe(MB);
  env.clock.advance(25 * 60 * 60 * 1000);
  await sweepTask(env.ctx)({}, {} as never);
  expect(await storageUsed(env, p.id)).toBe(0);
  expect(await keys()).toEqual([]);
  expect(await env.ctx.db.admin.selectFrom('upload_sessions').select('id').execute()).toEqual([]);
});

it('a 255-byte name (Japanese, spaces): finished on the other node under its name, and an unfinished one abandoned and refunded', async () => {
  const p = await makeProject(env.ctx);
  let stem = '';
  while (Buffer.byteLength(stem + '東京 タワー') <= 251) stem += '東京 タワー';
  stem = stem.trimEnd();
  const name = stem + 'x'.repeat(251 - Buffer.byteLength(stem)) + '.jpg';
  expect(Buffer.byteLength(name)).toBe(255);
  const bytes = randomBytes(300_000);
  const created = await create(a, p.sk, bytes.length, { filename: name, filetype: 'image/jpeg' });
  expect(created.status).toBe(201);
  const id = idOf(created);
  expect(id.length).toBeLessThanOrEqual(100);
  expect((await patch(a, p.sk, id, 0, bytes.subarray(0, 100_000))).status).toBe(204);
  const last = await patch(b.base, p.sk, id, 100_000, bytes.subarray(100_000));
  expect(last.status).toBe(204);
  const path = decodeURIComponent(last.headers.get('plinth-file-path')!);
  expect(path.startsWith(`${p.id}/`) && path.endsWith(`_${sanitiseFilename(name)}`)).toBe(true);
  const obj = await s3.client.send(new GetObjectCommand({ Bucket: 'platform-bucket', Key: path }));
  expect(Buffer.from(await obj.Body!.transformToByteArray()).equals(bytes)).toBe(true);

  const other = idOf(await create(a, p.sk, 6 * MB, { filename: name }));
  expect((await patch(b.base, p.sk, other, 0, randomBytes(MB))).status).toBe(204);
  expect(await storageUsed(env, p.id)).toBe(bytes.length + 6 * MB);
  const del = await fetch(`${a}/api/storage/tus/${other}`, { method: 'DELETE', headers: { ...p.sk, 'tus-resumable': '1.0.0' } });
  expect(del.status).toBe(204);
  expect(await storageUsed(env, p.id)).toBe(bytes.length);
  expect(await keys()).toEqual([path, `${path}.info`]); // the finished one's .info goes when it is deleted
});
