/**
 * The published @urbackend/sdk (0.4.8, unchanged, global fetch) against a listening app: its
 * storage.upload does request → PUT to our signed URL → confirm; deleteFile removes the file.
 */
import urBackend from '@urbackend/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../../src/db/embedded.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { onDisk, storageUsed } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  env = await createTestEnv({ PUBLIC_URL: base });
  await env.app.listen({ port, host: '127.0.0.1' });
  p = await makeProject(env.ctx);
});
afterAll(() => env.close());

it('storage.upload (sk) returns {url, path, provider} and the file is served; deleteFile removes it', async () => {
  const client = urBackend({ apiKey: p.secretKey, baseUrl: base });
  const bytes = Buffer.from('%PDF-1.4 hello from the sdk');
  const res = (await client.storage.upload(bytes, 'report final.pdf')) as { url: string; path: string; provider: string };
  expect(res.path).toMatch(new RegExp(`^${p.id}/[0-9a-f]{24}_report_final\\.pdf$`));
  expect(res.provider).toBe('internal');
  const got = await fetch(res.url);
  expect(got.status).toBe(200);
  expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
  expect(await storageUsed(env, p.id)).toBe(bytes.length);

  await expect(client.storage.deleteFile(res.path)).resolves.toEqual({});
  expect(onDisk(env, res.path)).toBe(false);
  expect(await storageUsed(env, p.id)).toBe(0);
  await expect(client.storage.deleteFile(res.path)).rejects.toMatchObject({ statusCode: 404 });
});

it('a browser-style pk client with a signed-in user can upload and delete its own file', async () => {
  const token = await makeUserToken(env.ctx, p, 'abcdefabcdefabcdefabcdef');
  const client = urBackend({ apiKey: p.publishableKey, baseUrl: base });
  client.auth.setToken(token);
  const res = (await client.storage.upload(new Blob(['hi there'], { type: 'text/plain' }), 'note.txt')) as { path: string };
  const row = await env.ctx.db.admin.selectFrom('files').select(['owner_id', 'status']).where('path', '=', res.path).executeTakeFirst();
  expect(row).toEqual({ owner_id: 'abcdefabcdefabcdefabcdef', status: 'confirmed' });
  await expect(client.storage.deleteFile(res.path)).resolves.toEqual({});
});

it('SDK errors: over 10 MB and a foreign path surface as errors with the server message', async () => {
  const client = urBackend({ apiKey: p.secretKey, baseUrl: base });
  await expect(client.storage.upload(Buffer.alloc(10 * 1024 * 1024 + 1))).rejects.toMatchObject({ message: 'File size exceeds limit.' });
  await expect(client.storage.deleteFile('someone-else/x.txt')).rejects.toMatchObject({ message: 'Access denied.' });
});
