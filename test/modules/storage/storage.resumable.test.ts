/**
 * Resumable uploads (tus) on the local driver, across two API nodes over one database and data
 * directory: an upload cut at 30 % and 70 % resumes on the other node from the server's offset
 * and becomes a normal file; its declared size is charged once at creation (concurrent
 * creations at the quota edge: one accepted) and refunded when it expires unfinished.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, makeUserToken } from '../../helpers/fixtures.js';
import { sweepTask } from '../../../src/modules/storage/sweep.js';
import { MB, onDisk, storageUsed } from './helpers.js';
import { create, cutPatch, idOf, listen, offset, offsetOf, patch, secondNode, uploadPath, type Node } from './tus-helpers.js';

let env: TestEnv;
let a: string;
let b: Node;
beforeAll(async () => {
  env = await createTestEnv();
  a = await listen(env.app);
  b = await secondNode(env);
});
afterAll(async () => {
  await b.close();
  await env.close();
});

const sessions = (path: string) => env.ctx.db.admin.selectFrom('upload_sessions').select('id').where('id', '=', path).execute();

describe('an upload interrupted on one node resumes on the other', () => {
  it('cut at 30 % on node A, resumed on B, cut at 70 % on B, finished on A: one confirmed file with the exact bytes', async () => {
    const p = await makeProject(env.ctx);
    const bytes = randomBytes(3 * MB);
    const created = await create(a, p.sk, bytes.length, { filename: 'holiday video.bin', filetype: 'video/mp4' });
    expect(created.status).toBe(201);
    const id = idOf(created);
    expect(await storageUsed(env, p.id)).toBe(bytes.length);

    await cutPatch(a, p.sk, id, 0, bytes, Math.floor(bytes.length * 0.3));
    const o1 = await offsetOf(b.base, p.sk, id);
    expect(o1).toBeGreaterThan(0);
    expect(o1).toBeLessThanOrEqual(Math.floor(bytes.length * 0.3));

    await cutPatch(b.base, p.sk, id, o1, bytes.subarray(o1), Math.floor(bytes.length * 0.7) - o1);
    const o2 = await offsetOf(a, p.sk, id);
    expect(o2).toBeGreaterThan(o1);
    expect(o2).toBeLessThanOrEqual(Math.floor(bytes.length * 0.7));

    const last = await patch(a, p.sk, id, o2, bytes.subarray(o2));
    expect(last.status).toBe(204);
    expect(last.headers.get('upload-offset')).toBe(String(bytes.length));
    const path = decodeURIComponent(last.headers.get('plinth-file-path')!);
    expect(path).toMatch(new RegExp(`^${p.id}/[0-9a-f]{24}_holiday_video\\.bin$`));

    // A normal file: confirmed, listed, served, charged once.
    const row = await env.ctx.db.admin.selectFrom('files').selectAll().where('path', '=', path).executeTakeFirstOrThrow();
    expect(row.status).toBe('confirmed');
    expect(Number(row.size)).toBe(bytes.length);
    expect(row.content_type).toBe('video/mp4');
    expect(await storageUsed(env, p.id)).toBe(bytes.length);
    const served = await fetch(`${b.base}/api/storage/public/${path.split('/').map(encodeURIComponent).join('/')}`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
    expect(await offsetOf(b.base, p.sk, id)).toBe(bytes.length);

    // Deleted like any file: bytes, session and charge gone.
    const del = await env.app.inject({ method: 'DELETE', url: '/api/storage/file', headers: p.sk, payload: { path } });
    expect(del.statusCode).toBe(200);
    expect(onDisk(env, path)).toBe(false);
    expect(await sessions(path)).toEqual([]);
    expect(await storageUsed(env, p.id)).toBe(0);
  });

  it('PATCHes alternating between the nodes keep the offsets right', async () => {
    const p = await makeProject(env.ctx);
    const bytes = randomBytes(400_000);
    const id = idOf(await create(b.base, p.sk, bytes.length));
    const nodes = [a, b.base, a, b.base];
    for (let i = 0; i < 4; i++) {
      const r = await patch(nodes[i]!, p.sk, id, i * 100_000, bytes.subarray(i * 100_000, (i + 1) * 100_000));
      expect(r.status).toBe(204);
      expect(r.headers.get('upload-offset')).toBe(String((i + 1) * 100_000));
    }
    // A stale offset (a client that did not ask HEAD) is refused, nothing written twice.
    expect((await patch(a, p.sk, id, 0, bytes.subarray(0, 10))).status).toBe(409);
  });
});

describe('quota', () => {
  it('charged once at creation by Upload-Length, refunded when the upload expires unfinished', async () => {
    const p = await makeProject(env.ctx);
    const size = 5 * MB;
    const created = await create(a, p.sk, size);
    const id = idOf(created);
    expect(created.headers.get('upload-expires')).toBeTruthy();
    expect(await storageUsed(env, p.id)).toBe(size);
    expect((await patch(b.base, p.sk, id, 0, randomBytes(MB))).status).toBe(204);
    expect(await storageUsed(env, p.id)).toBe(size);
    const path = await uploadPath(env, id);
    expect(onDisk(env, path)).toBe(true);

    env.clock.advance(25 * 60 * 60 * 1000);
    await sweepTask(env.ctx)({}, {} as never);
    expect(await storageUsed(env, p.id)).toBe(0);
    expect(onDisk(env, path)).toBe(false);
    expect(await sessions(path)).toEqual([]);
    expect((await offset(a, p.sk, id)).status).toBe(404);
  });

  it('two concurrent creations at the quota edge (12 MB each on 20 MB): exactly one accepted', async () => {
    const p = await makeProject(env.ctx);
    const results = await Promise.all([create(a, p.sk, 12 * MB), create(b.base, p.sk, 12 * MB)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 403]);
    const refused = results.find((r) => r.status === 403)!;
    expect((await refused.json()).code).toBe('storage_limit_exceeded');
    expect(await storageUsed(env, p.id)).toBe(12 * MB);
    const rows = await env.ctx.db.admin.selectFrom('files').select('id').where('project_id', '=', p.id).execute();
    expect(rows.length).toBe(1);
  });

  it('abandoning an upload (tus DELETE) frees its bytes at once', async () => {
    const p = await makeProject(env.ctx);
    const id = idOf(await create(a, p.sk, 2 * MB));
    await patch(a, p.sk, id, 0, randomBytes(1000));
    const del = await fetch(`${b.base}/api/storage/tus/${id}`, { method: 'DELETE', headers: { ...p.sk, 'tus-resumable': '1.0.0' } });
    expect(del.status).toBe(204);
    expect(await storageUsed(env, p.id)).toBe(0);
    expect((await offset(a, p.sk, id)).status).toBe(404);
  });
});

describe('limits and refusals', () => {
  it('a free plan file over 50 MB is refused (413) before anything is charged; pro takes it', async () => {
    const p = await makeProject(env.ctx);
    const r = await create(a, p.sk, 50 * MB + 1);
    expect(r.status).toBe(413);
    expect((await r.json()).code).toBe('file_too_large');
    expect(await storageUsed(env, p.id)).toBe(0);
    const pro = await makeProject(env.ctx, await makeOperator(env.ctx, { plan: 'pro' }));
    expect((await create(a, pro.sk, 60 * MB)).status).toBe(201);
  });

  it('deferred length is refused: there is nothing to charge', async () => {
    const p = await makeProject(env.ctx);
    const r = await create(a, p.sk, null);
    expect(r.status).toBe(400);
    expect((await r.json()).code).toBe('upload_length_required');
  });

  it('needs a key, and with a pk a signed-in user; another user sees no upload (404), another project is refused (403)', async () => {
    const p = await makeProject(env.ctx);
    expect((await create(a, {}, 10)).status).toBe(401);
    expect((await create(a, p.pk, 10)).status).toBe(401);
    const alice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, 'a1a1a1a1a1a1a1a1a1a1a1a1')}` };
    const bob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, 'b2b2b2b2b2b2b2b2b2b2b2b2')}` };
    const id = idOf(await create(a, alice, 10));
    expect((await offset(b.base, bob, id)).status).toBe(404);
    expect((await patch(b.base, bob, id, 0, Buffer.alloc(10))).status).toBe(404);
    const q = await makeProject(env.ctx);
    expect((await offset(a, q.sk, id)).status).toBe(403); // another project's folder, as everywhere
    expect((await patch(a, alice, id, 0, Buffer.alloc(10))).status).toBe(204);
    const row = await env.ctx.db.admin.selectFrom('files').select(['owner_id', 'status']).where('path', '=', await uploadPath(env, id)).executeTakeFirstOrThrow();
    expect(row).toEqual({ owner_id: 'a1a1a1a1a1a1a1a1a1a1a1a1', status: 'confirmed' });
  });

  it('a forged upload id naming another path is not found', async () => {
    const p = await makeProject(env.ctx);
    const forged = Buffer.from(`${p.id}/../../etc/passwd`).toString('base64url');
    expect((await offset(a, p.sk, forged)).status).toBe(404);
  });
});
