/**
 * Threat: concurrent uploads overspending the storage quota, or one file charged twice. Bytes
 * are charged when an upload is requested (its PUT fills the disk before any confirm): on the
 * free plan's 20 MB, three 8 MB requests at once → exactly two granted.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject } from '../../helpers/fixtures.js';
import { insertPending } from '../../../src/modules/storage/queries.js';
import { confirm, grantUpload, MB, putSigned, requestUpload, storageUsed } from './helpers.js';

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

it('three concurrent 8 MB requests on a 20 MB quota: exactly two granted, and confirming them charges nothing more', async () => {
  const p = await makeProject(env.ctx);
  const body = { filename: 'f.bin', contentType: 'application/octet-stream', size: 8 * MB };
  const results = await Promise.all([1, 2, 3].map(() => requestUpload(env, p.sk, body)));
  expect(results.map((r) => r.statusCode).sort()).toEqual([200, 200, 403]);
  expect(results.find((r) => r.statusCode === 403)!.json().message).toBe('Internal storage limit exceeded.');
  expect(await storageUsed(env, p.id)).toBe(16 * MB);
  for (const r of results.filter((x) => x.statusCode === 200)) {
    const { signedUrl, filePath } = r.json().data;
    expect((await putSigned(env, signedUrl, Buffer.alloc(8 * MB, 7))).statusCode).toBe(200);
    expect((await confirm(env, p.sk, filePath, 8 * MB)).statusCode).toBe(200);
  }
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
  // 7 × 3 MB = 21 MB asked for at once on a 20 MB quota: exactly six requests fit; every file
  // gets its own answer, and confirming the six changes nothing in the count.
  const results = await Promise.all(Array.from({ length: 7 }, (_, i) => requestUpload(env, p.sk, { filename: `c${i}.bin`, contentType: 'a/b', size: 3 * MB })));
  expect(results.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 403]);
  const grants = results.filter((r) => r.statusCode === 200).map((r) => r.json().data as { signedUrl: string; filePath: string });
  expect(new Set(grants.map((g) => g.filePath)).size).toBe(6);
  for (const g of grants) expect((await putSigned(env, g.signedUrl, Buffer.alloc(3 * MB, 1), { 'content-type': 'a/b' })).statusCode).toBe(200);
  const confirms = await Promise.all(grants.map((g) => confirm(env, p.sk, g.filePath, 3 * MB)));
  expect(confirms.every((r) => r.statusCode === 200)).toBe(true);
  confirms.forEach((r, i) => expect(r.json().data.path).toBe(grants[i]!.filePath));
  expect(await storageUsed(env, p.id)).toBe(18 * MB);
  const rows = await env.ctx.db.admin.selectFrom('files').select(['path', 'status']).where('project_id', '=', p.id).execute();
  expect(rows.filter((r) => r.status === 'confirmed').length).toBe(6);
  expect(rows.length).toBe(6); // the refused request left no row
});

it('one request statement for more than the whole quota, on a project never charged before: only what fits', async () => {
  const p = await makeProject(env.ctx);
  // Three 8 MB uploads requested by one statement while the project has no storage counter row
  // yet: the guard must still hold.
  const now = new Date();
  const files = [1, 2, 3].map((i) => ({ id: `${'a'.repeat(23)}${i}`, path: `${p.id}/${'a'.repeat(23)}${i}_f.bin`, size: 8 * MB, contentType: 'a/b', createdAt: now }));
  const inserted = await env.ctx.db.read({ projectId: p.id, keyKind: 'secret' }, (db) =>
    insertPending(db, { projectId: p.id, ownerId: null, provider: 'internal', limit: 20 * MB }, files),
  );
  expect(inserted.size).toBe(2);
  expect(await storageUsed(env, p.id)).toBe(16 * MB);
});
