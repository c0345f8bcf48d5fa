/** Housekeeping: unconfirmed uploads swept after 24 h, project deletion removes files, dashboard. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { drainJobs } from '../../helpers/jobs.js';
import { sweepTask } from '../../../src/modules/storage/sweep.js';
import { grantUpload, onDisk, putSigned, upload } from './helpers.js';

let env: TestEnv;
let p: TestProject;
beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
});
afterAll(() => env.close());

describe('sweeping unconfirmed uploads', () => {
  it('the hourly sweep job removes stale uploads after 24 h, re-arms itself, and keeps confirmed files', async () => {
    const { signedUrl, filePath } = await grantUpload(env, p.sk, 3, 'a/b', 'stale.bin');
    await putSigned(env, signedUrl, Buffer.from('abc'), { 'content-type': 'a/b' });
    const kept = await upload(env, p.sk, 'kept.bin', Buffer.from('xyz'));
    const jobs = () =>
      sql<{ key: string; run_at: Date }>`SELECT key, run_at FROM graphile_worker._private_jobs WHERE task_id = (SELECT id FROM graphile_worker._private_tasks WHERE identifier = 'storage.sweep')`.execute(env.ctx.db.admin);
    const hour = env.clock.now().toISOString().slice(0, 13);
    const first = await jobs();
    expect(first.rows.map((r) => r.key)).toEqual([`storage.sweep:${hour}`]);
    expect(new Date(first.rows[0]!.run_at).getTime() - Date.parse(`${hour}:00:00Z`)).toBe(25 * 3600_000 + 60_000);
    // Run early (not yet 24 h old): nothing removed, and a sweep is still scheduled.
    await sql`UPDATE graphile_worker._private_jobs SET run_at = now()`.execute(env.ctx.db.admin);
    await drainJobs(env);
    expect(onDisk(env, filePath)).toBe(true);
    expect((await jobs()).rows.length).toBe(1);
    env.clock.advance(24 * 3600_000 + 61_000);
    await sql`UPDATE graphile_worker._private_jobs SET run_at = now()`.execute(env.ctx.db.admin);
    await drainJobs(env);
    expect(onDisk(env, filePath)).toBe(false);
    expect(await env.ctx.db.admin.selectFrom('files').select('id').where('path', '=', filePath).executeTakeFirst()).toBeUndefined();
    expect(onDisk(env, kept.filePath)).toBe(true);
    expect((await jobs()).rows.length).toBe(0);
  });

  it("an hour's sweep removes only that hour's stale uploads; later hours wait for their own", async () => {
    const pendingPaths = async () =>
      (await env.ctx.db.admin.selectFrom('files').select('path').where('status', '=', 'pending').execute()).map((r) => r.path);
    const hour = env.clock.now().toISOString().slice(0, 13);
    const early = await grantUpload(env, p.sk, 1, 'a/b', 'hour1.bin');
    env.clock.advance(3600_000);
    const later = await grantUpload(env, p.sk, 1, 'a/b', 'hour2.bin');
    env.clock.advance(30 * 3600_000); // both are stale now
    await env.ctx.queue.add('storage.sweep', { hour });
    await drainJobs(env);
    const left = await pendingPaths();
    expect(left).not.toContain(early.filePath);
    expect(left).toContain(later.filePath);
  });

  it('the bulk sweep (empty payload) removes every stale pending upload', async () => {
    const { signedUrl, filePath } = await grantUpload(env, p.sk, 1, 'a/b', 'stale2.bin');
    await putSigned(env, signedUrl, Buffer.from('a'), { 'content-type': 'a/b' });
    env.clock.advance(25 * 3600_000);
    await env.ctx.queue.add('storage.sweep', {});
    await drainJobs(env);
    expect(onDisk(env, filePath)).toBe(false);
  });

  it("one project's unreachable bucket does not keep the sweep from the others' stale uploads", async () => {
    const broken = await makeProject(env.ctx);
    const bucket = { bucket: 'gone', region: 'us-east-1', endpoint: 'http://127.0.0.1:1', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true };
    await env.app.inject({ method: 'PATCH', url: `/api/projects/${broken.id}/storage`, headers: broken.owner.auth, payload: bucket });
    const old = new Date(env.clock.now().getTime() - 30 * 3600_000);
    const stuck = { id: 'e'.repeat(24), project: broken.id, provider: 'external', at: old };
    const fine = { id: 'd'.repeat(24), project: p.id, provider: 'internal', at: new Date(old.getTime() + 1000) };
    for (const f of [stuck, fine]) {
      await sql`INSERT INTO files (project_id, id, path, size, content_type, provider, created_at)
        VALUES (${f.project}, ${f.id}, ${`${f.project}/${f.id}_x.bin`}, 1, 'a/b', ${f.provider}, ${f.at})`.execute(env.ctx.db.admin);
    }
    await expect(sweepTask(env.ctx)({}, {} as never)).rejects.toThrow(/1 stale upload\(s\) could not be removed/);
    const left = (await env.ctx.db.admin.selectFrom('files').select('id').where('id', 'in', [stuck.id, fine.id]).execute()).map((r) => r.id);
    expect(left).toEqual([stuck.id]);
  });
});

describe('dashboard', () => {
  it('lists files newest first with paging, and reports usage against the plan', async () => {
    const q = await makeProject(env.ctx);
    for (const n of ['one', 'two', 'three']) {
      await upload(env, q.sk, `${n}.txt`, Buffer.from(n), 'text/plain');
      env.clock.advance(1000);
    }
    const list = await env.app.inject({ method: 'GET', url: `/api/projects/${q.id}/files?limit=2`, headers: q.owner.auth });
    expect(list.statusCode).toBe(200);
    const data = list.json().data;
    expect(data.total).toBe(3);
    expect(data.items.map((i: { path: string }) => i.path.split('_').pop())).toEqual(['three.txt', 'two.txt']);
    expect(data.items[0].url).toContain('/api/storage/public/');
    const page2 = await env.app.inject({ method: 'GET', url: `/api/projects/${q.id}/files?limit=2&page=2`, headers: q.owner.auth });
    expect(page2.json().data.items.length).toBe(1);
    const usage = await env.app.inject({ method: 'GET', url: `/api/projects/${q.id}/storage`, headers: q.owner.auth });
    expect(usage.json().data).toMatchObject({ used: 11, limit: 20 * 1024 * 1024, fileCount: 3, bucket: null });
    const huge = await env.app.inject({ method: 'GET', url: `/api/projects/${q.id}/files?page=100000000000000000000`, headers: q.owner.auth });
    expect(huge.statusCode).toBe(400);
    const other = await makeProject(env.ctx);
    expect((await env.app.inject({ method: 'GET', url: `/api/projects/${q.id}/files`, headers: other.owner.auth })).statusCode).toBe(404);
  });

  it('deleting the project removes its files from disk', async () => {
    const q = await makeProject(env.ctx);
    const { filePath } = await upload(env, q.sk, 'bye.txt', Buffer.from('bye'), 'text/plain');
    expect(onDisk(env, filePath)).toBe(true);
    const res = await env.app.inject({ method: 'DELETE', url: `/api/projects/${q.id}`, headers: q.owner.auth });
    expect(res.statusCode).toBe(200);
    expect(onDisk(env, filePath)).toBe(false);
    expect(onDisk(env, q.id)).toBe(false);
  });
});
