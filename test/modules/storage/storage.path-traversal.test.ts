/**
 * Threat: a client-chosen name or path reaching outside its project folder (another project's
 * files, `..`, encoded separators, backslashes, control characters). All are 403 `Access
 * denied.`, and every stored file stays under <dataDir>/storage/<projectId>/.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sanitiseFilename } from '../../../src/modules/storage/paths.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { confirm, deleteFile, upload } from './helpers.js';

let env: TestEnv;
let a: TestProject;
let b: TestProject;
let bPath: string;

beforeAll(async () => {
  env = await createTestEnv();
  a = await makeProject(env.ctx);
  b = await makeProject(env.ctx);
  bPath = (await upload(env, b.sk, 'secret.txt', Buffer.from('b'), 'text/plain')).filePath;
});
afterAll(() => env.close());

describe('path rules', () => {
  const id = 'c'.repeat(24);
  const bad = () => [
    bPath,
    `${a.id}/../${bPath}`,
    `${a.id}/./${id}_x.txt`,
    `${a.id}/..`,
    `../${bPath}`,
    `${a.id}%2f${id}_x.txt`,
    `${a.id}/${id}_x%2f..%2fy`,
    `${a.id}/${id}_x%5c..%5cy`,
    `${a.id}/${id}_a\\..\\b`,
    `${a.id}/${id}_a\u0000b`,
    `${a.id}/${id}_a\nb`,
    `${a.id}/sub/${id}_x.txt`,
    `${a.id}`,
    `${a.id}/`,
  ];
  // `${a.id}/x.txt` (a plain unknown name of the own folder) is 404: storage.delete-unknown.test.ts.

  it('delete: another project, dot segments, encoded separators, backslashes, control chars → 403', async () => {
    for (const p of bad()) {
      const res = await deleteFile(env, a.sk, p);
      expect(res.statusCode, p).toBe(403);
      expect(res.json().message).toBe('Access denied.');
    }
  });

  it('confirm: the same paths → 403', async () => {
    for (const p of bad()) expect((await confirm(env, a.sk, p, 1)).statusCode, p).toBe(403);
  });

  it('public serving and the signed PUT refuse encoded and dotted paths', async () => {
    for (const url of [
      `/api/storage/public/${a.id}%2f..%2f${bPath}`,
      `/api/storage/public/${a.id}/..%2f${bPath}`,
      `/api/storage/objects/${a.id}%2f${id}_x?expires=1&size=1&ct=a&sig=x`,
    ]) {
      const res = await env.app.inject({ method: url.includes('objects') ? 'PUT' : 'GET', url, payload: url.includes('objects') ? 'x' : undefined });
      expect([403, 404], url).toContain(res.statusCode);
    }
  });

  it('the other project file is untouched', async () => {
    const res = await env.app.inject({ method: 'GET', url: `/api/storage/public/${bPath}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('b');
  });
});

describe('filename sanitising', () => {
  it.each([
    ['../../etc/passwd', '....etcpasswd'],
    ['..\\..\\boot.ini', '....boot.ini'],
    ['a b\tc\nd.txt', 'a_b_c_d.txt'],
    ['a\u0001\u007fb', 'ab'],
    ['%2e%2e%2fx', '2e2e2fx'],
    ['.hidden', 'hidden'],
    ['', 'file'],
  ])('%j → no separators, no leading dots', (name, expected) => {
    const s = sanitiseFilename(name);
    expect(s).toBe(expected.replace(/^\.+/, ''));
    expect(s).not.toMatch(/[/\\]/);
  });

  it('caps the length and keeps every hostile upload inside its project folder', async () => {
    expect(Buffer.byteLength(sanitiseFilename('é'.repeat(500)))).toBeLessThanOrEqual(150);
    for (const name of ['../../../escape.txt', '..\\..\\escape.txt', '/abs/escape.txt', 'x'.repeat(400)]) {
      const { res, filePath } = await upload(env, a.sk, name, Buffer.from('z'), 'text/plain');
      expect(res.statusCode, name).toBe(200);
      expect(filePath.startsWith(`${a.id}/`)).toBe(true);
    }
    const root = env.config.storage.localDir;
    expect(readdirSync(root).filter((f) => f !== '.tmp').sort()).toEqual([a.id, b.id].sort());
    expect(readdirSync(path.join(root, a.id)).length).toBe(4);
  });
});
