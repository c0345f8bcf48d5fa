/**
 * Threat: a tus client's malformed header turned into a 500 or a plain-text answer (a crash
 * path, an answer outside the API's envelope). Every malformed header of creation and PATCH
 * gets the JSON error envelope with a stable code, as every other route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { create, idOf, listen } from './tus-helpers.js';

let env: TestEnv;
let base: string;
let p: TestProject;
let id: string;
beforeAll(async () => {
  env = await createTestEnv();
  base = await listen(env.app);
  p = await makeProject(env.ctx);
  const made = await create(base, p.sk, 10);
  expect(made.status).toBe(201);
  id = idOf(made);
});
afterAll(() => env.close());

const meta = `filename ${Buffer.from('a.bin').toString('base64')},filetype ${Buffer.from('application/octet-stream').toString('base64')}`;
const TUS = { 'tus-resumable': '1.0.0' };

async function envelope(res: Response) {
  const text = await res.text();
  expect(res.headers.get('content-type') ?? '', text).toMatch(/^application\/json/);
  const body = JSON.parse(text) as { success: boolean; code: string };
  expect(body.success).toBe(false);
  return { status: res.status, code: body.code };
}

const post = (headers: Record<string, string>) => fetch(`${base}/api/storage/tus`, { method: 'POST', headers: { ...TUS, ...p.sk, 'upload-metadata': meta, ...headers } });
const patch = (headers: Record<string, string>, body = new Uint8Array(2)) =>
  fetch(`${base}/api/storage/tus/${id}`, { method: 'PATCH', headers: { ...TUS, ...p.sk, 'content-type': 'application/offset+octet-stream', ...headers }, body });

describe('malformed tus headers get the JSON envelope with a stable code, never plain text or a 500', () => {
  it.each([
    ['Upload-Length: abc', { 'upload-length': 'abc' }],
    ['Upload-Length: -1', { 'upload-length': '-1' }],
    ['Upload-Length: 1.5', { 'upload-length': '1.5' }],
    ['Upload-Length: 0x10', { 'upload-length': '0x10' }],
    ['Upload-Length beyond any integer', { 'upload-length': '99999999999999999999999' }],
    ['Upload-Length and Upload-Defer-Length both', { 'upload-length': '10', 'upload-defer-length': '1' }],
    ['Upload-Defer-Length: 2', { 'upload-defer-length': '2' }],
  ])('creation with %s', async (_what, headers) => {
    const r = await envelope(await post(headers));
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.code).toMatch(/^(upload_length_required|resumable_request_invalid|file_too_large)$/);
  });

  it.each([
    ['Upload-Metadata not base64', { 'upload-length': '10', 'upload-metadata': 'filename !!!' }],
    ['Upload-Metadata with a duplicate key', { 'upload-length': '10', 'upload-metadata': `${meta},filename YQ==` }],
    ['Tus-Resumable of another version', { 'upload-length': '10', 'tus-resumable': '0.2.0' }],
  ])('creation with %s', async (_what, headers) => {
    const r = await envelope(await post(headers));
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
  });

  it.each([
    ['Upload-Offset: -1', { 'upload-offset': '-1' }],
    ['Upload-Offset: abc', { 'upload-offset': 'abc' }],
    ['Upload-Offset: 1.5', { 'upload-offset': '1.5' }],
    ['no Upload-Offset', {}],
    ['Upload-Offset beyond the length', { 'upload-offset': '11' }],
    ['Content-Type other than offset+octet-stream', { 'upload-offset': '0', 'content-type': 'text/plain' }],
    ['Upload-Length changed on PATCH', { 'upload-offset': '0', 'upload-length': 'abc' }],
  ])('PATCH with %s', async (_what, headers) => {
    const r = await envelope(await patch(headers));
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.code).toMatch(/^(resumable_request_invalid|upload_offset_conflict|unsupported_media_type|tus_resumable_required)$/);
  });
});
