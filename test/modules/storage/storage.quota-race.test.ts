/**
 * Threat: concurrent confirms overspending the storage quota, or one file charged twice.
 * Free plan 20 MB: three 8 MB uploads confirmed at once → exactly two succeed.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject } from '../../helpers/fixtures.js';
import { confirmPending } from '../../../src/modules/storage/queries.js';
import { confirm, grantUpload, MB, putSigned, storageUsed } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

async function prepared(headers: Record<string, string>, size: number) {
  const { signedUrl, filePath } = await grantUpload(env, headers, size);
  expect((await putSigned(env, signedUrl, Buffer.alloc(size, 7))).statusCode).toBe(200);
  return filePath;
}

it('three concurrent 8 MB confirms on a 20 MB quota: exactly two succeed', async () => {
  const p = await makeProject(env.ctx);
  const paths = [await prepared(p.sk, 8 * MB), await prepared(p.sk, 8 * MB), await prepared(p.sk, 8 * MB)];
  const results = await Promise.all(paths.map((fp) => confirm(env, p.sk, fp, 8 * MB)));
  const codes = results.map((r) => r.statusCode).sort();
  expect(codes).toEqual([200, 200, 403]);
  expect(results.find((r) => r.statusCode === 403)!.json().message).toBe('Internal storage limit exceeded.');
  expect(await storageUsed(env, p.id)).toBe(16 * MB);
  const confirmed = await env.ctx.db.admin.selectFrom('files').select('id').where('project_id', '=', p.id).where('status', '=', 'confirmed').execute();
  expect(confirmed.length).toBe(2);
});

it('the same file confirmed ten times at once is charged once', async () => {
  const p = await makeProject(env.ctx);
  const fp = await prepared(p.sk, 3 * MB);
  const results = await Promise.all(Array.from({ length: 10 }, () => confirm(env, p.sk, fp, 3 * MB)));
  expect(results.every((r) => r.statusCode === 200)).toBe(true);
  expect(await storageUsed(env, p.id)).toBe(3 * MB);
});

it('deleting frees exactly the charged bytes, concurrent deletes refund once', async () => {
  const p = await makeProject(env.ctx);
  const fp = await prepared(p.sk, 2 * MB);
  await confirm(env, p.sk, fp, 2 * MB);
  const fp2 = await prepared(p.sk, MB);
  await confirm(env, p.sk, fp2, MB);
  const dels = await Promise.all(Array.from({ length: 5 }, () => env.app.inject({ method: 'DELETE', url: '/api/storage/file', headers: p.sk, payload: { path: fp } })));
  expect(dels.map((d) => d.statusCode).sort()).toEqual([200, 404, 404, 404, 404]);
  expect(await storageUsed(env, p.id)).toBe(MB);
});

it('concurrent requests and confirms sharing statements: each answered alone, the quota exact', async () => {
  const p = await makeProject(env.ctx);
  // 7 × 3 MB = 21 MB asked for at once on a 20 MB quota: all requests fit the headroom, and
  // confirmed together exactly six fit; every file gets its own answer.
  const grants = await Promise.all(Array.from({ length: 7 }, (_, i) => grantUpload(env, p.sk, 3 * MB, 'a/b', `c${i}.bin`)));
  expect(new Set(grants.map((g) => g.filePath)).size).toBe(7);
  for (const g of grants) expect((await putSigned(env, g.signedUrl, Buffer.alloc(3 * MB, 1), { 'content-type': 'a/b' })).statusCode).toBe(200);
  const results = await Promise.all(grants.map((g) => confirm(env, p.sk, g.filePath, 3 * MB)));
  expect(results.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 403]);
  results.forEach((r, i) => r.statusCode === 200 && expect(r.json().data.path).toBe(grants[i]!.filePath));
  expect(await storageUsed(env, p.id)).toBe(18 * MB);
  const rows = await env.ctx.db.admin.selectFrom('files').select(['path', 'status']).where('project_id', '=', p.id).execute();
  expect(rows.filter((r) => r.status === 'confirmed').length).toBe(6);
  expect(rows.length).toBe(6); // the refused upload was discarded
});

it('one confirm statement for more than the whole quota, on a project never charged before: only what fits', async () => {
  const p = await makeProject(env.ctx);
  // Three pending 8 MB uploads (each fits the empty 20 MB quota at request time), confirmed by
  // one statement while the project has no storage counter row yet: the guard must still hold.
  const paths = [await prepared(p.sk, 8 * MB), await prepared(p.sk, 8 * MB), await prepared(p.sk, 8 * MB)];
  const rows = await env.ctx.db.read({ projectId: p.id, keyKind: 'secret' }, (db) =>
    confirmPending(db, { projectId: p.id, provider: 'internal', cap: 20 * MB }, paths.map((path) => ({ path, size: 8 * MB })), new Date()),
  );
  expect(rows.map((r) => r.status).sort()).toEqual(['confirmed', 'confirmed', 'pending']);
  expect(await storageUsed(env, p.id)).toBe(16 * MB);
});
