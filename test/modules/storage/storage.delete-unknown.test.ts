/**
 * Spec (DELETE /api/storage/file, errors 401/404): deleting a path of your own project that does
 * not exist is 404 `File not found.`, whatever its name looks like; another project's path and
 * malformed paths (traversal, encodings, extra segments) stay 403 `Access denied.`; the stored
 * files are untouched either way.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { deleteFile, onDisk, upload } from './helpers.js';

let env: TestEnv;
let a: TestProject;
let b: TestProject;
let bPath: string;

beforeAll(async () => {
  env = await createTestEnv();
  a = await makeProject(env.ctx);
  b = await makeProject(env.ctx);
  bPath = (await upload(env, b.sk, 'kept.txt', Buffer.from('b'), 'text/plain')).filePath;
});
afterAll(() => env.close());

it('an unknown file of the own project is 404', async () => {
  const id = 'c'.repeat(24);
  for (const path of [`${a.id}/photo.png`, `${a.id}/${id}_never-uploaded.txt`, `/${a.id}/report.pdf`, `${a.id}/${id}`]) {
    const res = await deleteFile(env, a.sk, path);
    expect(res.statusCode, path).toBe(404);
    expect(res.json()).toMatchObject({ success: false, message: 'File not found.' });
  }
});

it("another project's path and malformed paths stay 403", async () => {
  for (const path of [bPath, `${b.id}/photo.png`, `${a.id}/../${bPath}`, `${a.id}/x/y.png`, `${a.id}/a%2fb.png`, `${a.id}/..`]) {
    const res = await deleteFile(env, a.sk, path);
    expect(res.statusCode, path).toBe(403);
  }
  expect(onDisk(env, bPath)).toBe(true);
});
