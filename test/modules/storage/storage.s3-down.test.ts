/**
 * Fault: the S3 store cannot be reached. A storage call that needs it (confirm's HEAD, a
 * delete) answers 503 `storage_unavailable` with Retry-After, never a 500; nothing is
 * half-recorded (the upload stays pending, the deleted file stays, quota unchanged); and the
 * same calls succeed once the store is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { FAKE_KEY, startFakeS3, type FakeS3 } from '../../fakes/s3.js';
import { confirm, deleteFile, grantUpload, storageUsed } from './helpers.js';

let env: TestEnv;
let s3: FakeS3;
let proxy: TcpProxy;
let p: TestProject;

beforeAll(async () => {
  s3 = await startFakeS3({ now: () => env.clock.now() });
  await s3.createBucket('platform-bucket');
  const u = new URL(s3.endpoint);
  proxy = await startTcpProxy(u.hostname, Number(u.port));
  env = await createTestEnv({
    STORAGE_DRIVER: 's3',
    S3_ENDPOINT: proxy.via(s3.endpoint).replace(/\/$/, ''),
    S3_REGION: s3.region,
    S3_BUCKET: 'platform-bucket',
    S3_ACCESS_KEY_ID: FAKE_KEY.accessKeyId,
    S3_SECRET_ACCESS_KEY: FAKE_KEY.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
  });
  p = await makeProject(env.ctx);
});
afterAll(async () => {
  await env.close();
  await proxy.close();
  await s3.close();
});

const put = (url: string, body: string) => fetch(url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body });

async function uploaded(body: string): Promise<string> {
  const g = await grantUpload(env, p.sk, body.length, 'text/plain', 'f.txt');
  expect((await put(g.signedUrl, body)).status).toBe(200);
  return g.filePath;
}

const fileRow = (path: string) => env.ctx.db.admin.selectFrom('files').select(['status']).where('path', '=', path).executeTakeFirst();

function expectUnavailable(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }): void {
  expect(res.statusCode).toBe(503);
  expect(res.headers['retry-after']).toBe('5');
  expect(res.json()).toMatchObject({ success: false, data: {}, code: 'storage_unavailable' });
}

describe('S3 unreachable', () => {
  it('confirm and delete answer 503 with Retry-After, change nothing, and work once the store is back', async () => {
    const pending = await uploaded('pending');
    const done = await uploaded('done');
    expect((await confirm(env, p.sk, done, 4)).statusCode).toBe(200);
    const used = await storageUsed(env, p.id);

    await proxy.cut();
    try {
      expectUnavailable(await confirm(env, p.sk, pending, 7));
      expectUnavailable(await deleteFile(env, p.sk, done));
      expect(await fileRow(pending)).toEqual({ status: 'pending' });
      expect(await fileRow(done)).toEqual({ status: 'confirmed' });
      expect(await storageUsed(env, p.id)).toBe(used);
      expect(env.logs.filter((l) => l.includes('the store cannot be reached')).length).toBeGreaterThan(0);
      expect(env.logs.filter((l) => /"level":50/.test(l))).toEqual([]);
    } finally {
      await proxy.restore();
    }

    expect((await confirm(env, p.sk, pending, 7)).statusCode).toBe(200);
    expect((await deleteFile(env, p.sk, done)).statusCode).toBe(200);
    expect(await fileRow(pending)).toEqual({ status: 'confirmed' });
    expect(await fileRow(done)).toBeUndefined();
  });
});
