/**
 * Threat: an end user fills the server's disk with uploads that are never confirmed. The
 * signed PUT writes the bytes before any confirm and unconfirmed uploads live 24 h, so pending
 * bytes count against the project's storage quota from the request on, and are given back when
 * the pending upload is deleted or swept.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sweepTask } from '../../../src/modules/storage/sweep.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeCollection, makeProject, makeUserToken, USERS_FIELDS, type TestProject } from '../../helpers/fixtures.js';
import { deleteFile, grantUpload, MB, putSigned, requestUpload, storageUsed } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let asUser: Record<string, string>;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  await makeCollection(env.ctx, p.id, 'users', USERS_FIELDS);
  const signup = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: p.pk, payload: { email: 'filler@example.com', password: 'long enough 1' } });
  asUser = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, signup.json().data.user._id)}` };
});
afterAll(() => env.close());

const body = (size: number) => ({ filename: 'junk.bin', contentType: 'application/octet-stream', size });

it('never-confirmed uploads cannot hold more than the quota (20 MB free plan)', async () => {
  for (let i = 0; i < 2; i++) {
    const { signedUrl } = await grantUpload(env, asUser, 9 * MB);
    expect((await putSigned(env, signedUrl, Buffer.alloc(9 * MB, 1))).statusCode).toBe(200); // on disk, never confirmed
  }
  const third = await requestUpload(env, asUser, body(9 * MB));
  expect(third.statusCode).toBe(403);
  expect(third.json().message).toBe('Internal storage limit exceeded.');
  expect(await storageUsed(env, p.id)).toBe(18 * MB);
});

it('deleting a pending upload gives its bytes back', async () => {
  const q = await makeProject(env.ctx);
  const { filePath } = await grantUpload(env, q.sk, 10 * MB);
  expect(await storageUsed(env, q.id)).toBe(10 * MB);
  expect((await deleteFile(env, q.sk, filePath)).statusCode).toBe(200);
  expect(await storageUsed(env, q.id)).toBe(0);
});

it('the sweep of stale uploads gives their bytes back', async () => {
  const q = await makeProject(env.ctx);
  await grantUpload(env, q.sk, 10 * MB);
  await grantUpload(env, q.sk, 10 * MB);
  expect((await requestUpload(env, q.sk, body(MB))).statusCode).toBe(403);
  env.clock.advance(25 * 3600_000);
  await sweepTask(env.ctx)({}, {} as never);
  expect(await storageUsed(env, q.id)).toBe(0);
  expect((await requestUpload(env, q.sk, body(MB))).statusCode).toBe(200);
});
