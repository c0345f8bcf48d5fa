/**
 * Deleting stored backups (docs/backup.md "Deleting a backup"), through the dashboard API and the
 * real job handlers, checked in the storage backend itself (local disk; the project's own bucket
 * on the S3 fake): an admin deletes one and its object and row are gone, with an audit entry;
 * a developer or viewer is refused; another project's backup id is 404; a backup still being
 * written or restored is refused (409 `backup_in_use`) and deletable once done; deleting the
 * project removes its backups' objects on both backends.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import * as bq from '../../../src/modules/backup/backup-queries.js';
import { requestBackup } from '../../../src/modules/backup/run-service.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, type TestProject } from '../../helpers/fixtures.js';
import { drainJobs } from '../../helpers/jobs.js';
import { FAKE_KEY, startFakeS3, type FakeS3 } from '../../fakes/s3.js';
import { addMember } from '../members/helpers.js';
import { apiProject, call, must } from './helpers.js';

let env: TestEnv;
let s3: FakeS3;

beforeAll(async () => {
  s3 = await startFakeS3({ now: () => env.clock.now() });
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.close();
  await s3?.close();
});

const base = (p: TestProject) => `/api/projects/${p.id}`;
const objectOf = (projectId: string, backupId: string) => path.join(env.config.storage.localDir, '_backups', projectId, `${backupId}.plbk`);
const rowsOf = async (projectId: string) => (await bq.listBackups(env.ctx.db.admin, projectId, 100)).map((b) => b.id);

/** A project built through the API with a collection and a few documents. */
async function project(name: string) {
  const owner = await makeOperator(env.ctx, { plan: 'pro' });
  const p = await apiProject(env, owner, name);
  await must(env, 'POST', `${base(p)}/collections`, owner.auth, { name: 'notes', schema: [{ key: 'k', type: 'String' }] });
  for (let i = 0; i < 3; i++) await must(env, 'POST', '/api/data/notes', p.sk, { k: `n${i}` });
  return p;
}

/** A second backup, a day later (retention keeps one a day), as "back up now" queues it (the operator's token is not valid at that date). */
async function backupNextDay(p: TestProject): Promise<string> {
  env.clock.set(new Date(Date.now() + 86_400_000));
  try {
    const { backupId } = await requestBackup(env.ctx, p.id);
    await drainJobs(env);
    return backupId;
  } finally {
    env.clock.set(new Date());
  }
}

/** "Back up now", run by the workers: the stored backup's id. */
async function backupNow(p: TestProject): Promise<string> {
  const r = await must(env, 'POST', `${base(p)}/backups`, p.owner.auth);
  await drainJobs(env);
  const id = r.data.backupId as string;
  const [b] = (await must(env, 'GET', `${base(p)}/backups`, p.owner.auth)).data as Array<{ id: string; status: string }>;
  expect(b).toMatchObject({ id, status: 'succeeded' });
  return id;
}

describe('deleting a backup', () => {
  it('an admin deletes one: its object leaves the storage, its row the list, and the audit log records it', async () => {
    const p = await project('Delete one');
    const admin = await addMember(env, p.id, 'admin', p.owner.id);
    const older = await backupNow(p);
    const newer = await backupNextDay(p);
    expect(existsSync(objectOf(p.id, older))).toBe(true);

    const r = await call(env, 'DELETE', `${base(p)}/backups/${older}`, admin.auth);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'Backup deleted', data: { deleted: true, backup: { id: older, status: 'succeeded', storage: 'internal', counts: { documents: 3 } } } });
    expect(existsSync(objectOf(p.id, older))).toBe(false);
    expect(readdirSync(path.join(env.config.storage.localDir, '_backups', p.id))).toEqual([`${newer}.plbk`]);
    expect(await rowsOf(p.id)).toEqual([newer]);
    expect((await must(env, 'GET', `${base(p)}/backups`, p.owner.auth)).data.map((b: { id: string }) => b.id)).toEqual([newer]);
    // gone: a second delete, a download and a restore of it are 404
    for (const [method, url, body] of [
      ['DELETE', `${base(p)}/backups/${older}`, undefined],
      ['GET', `${base(p)}/backups/${older}/download`, undefined],
      ['POST', `${base(p)}/backups/${older}/restore`, { into: 'new' }],
    ] as const) {
      const again = await call(env, method, url, admin.auth, body);
      expect([method, url, again.status, again.body.code]).toEqual([method, url, 404, 'backup_not_found']);
    }
    // the other backup still opens
    const dl = await env.app.inject({ method: 'GET', url: `${base(p)}/backups/${newer}/download`, headers: p.owner.auth });
    expect(dl.statusCode).toBe(200);

    const audit = (await must(env, 'GET', `${base(p)}/audit?action=backup.delete`, p.owner.auth)).data.items;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'backup.delete', target: older, operator: { id: admin.id }, before: { id: older, status: 'succeeded', storage: 'internal' }, after: null });
  });

  it('a developer or a viewer is refused (403 project_role_forbidden) and the backup stays', async () => {
    const p = await project('Refused');
    const id = await backupNow(p);
    for (const role of ['developer', 'viewer'] as const) {
      const member = await addMember(env, p.id, role, p.owner.id);
      const r = await call(env, 'DELETE', `${base(p)}/backups/${id}`, member.auth);
      expect({ role, status: r.status, code: r.body.code }).toEqual({ role, status: 403, code: 'project_role_forbidden' });
      expect(r.body.message).toContain('needs the admin role');
    }
    expect(existsSync(objectOf(p.id, id))).toBe(true);
    expect(await rowsOf(p.id)).toEqual([id]);
    expect((await must(env, 'GET', `${base(p)}/audit?action=backup.delete`, p.owner.auth)).data.items).toEqual([]);
  });

  it("another project's backup id is 404 backup_not_found, through the operator's own project or not", async () => {
    const p = await project('Theirs');
    const id = await backupNow(p);
    const mine = await apiProject(env, p.owner, 'Mine, same owner');
    const r = await call(env, 'DELETE', `${base(mine)}/backups/${id}`, p.owner.auth);
    expect([r.status, r.body.code]).toEqual([404, 'backup_not_found']);
    const stranger = await makeOperator(env.ctx, { plan: 'pro' });
    const strangers = await apiProject(env, stranger, 'A stranger');
    expect((await call(env, 'DELETE', `${base(strangers)}/backups/${id}`, stranger.auth)).body.code).toBe('backup_not_found');
    expect((await call(env, 'DELETE', `${base(p)}/backups/${id}`, stranger.auth)).status).toBe(404);
    const unknown = await call(env, 'DELETE', `${base(p)}/backups/000000000000000000000000`, p.owner.auth);
    expect([unknown.status, unknown.body.code]).toEqual([404, 'backup_not_found']);
    expect(existsSync(objectOf(p.id, id))).toBe(true);
    expect(await rowsOf(p.id)).toEqual([id]);
  });

  it('a backup still being written, or being restored, is refused with 409 backup_in_use; once done it deletes', async () => {
    const p = await project('Busy');
    // queued: "back up now" not yet run by the workers
    const queued = (await must(env, 'POST', `${base(p)}/backups`, p.owner.auth)).data.backupId as string;
    const q = await call(env, 'DELETE', `${base(p)}/backups/${queued}`, p.owner.auth);
    expect([q.status, q.body.code]).toEqual([409, 'backup_in_use']);
    expect(q.body.message).toMatch(/still being written \(queued\)/);
    // running: a worker has started its attempt
    await bq.startAttempt(env.ctx.db.admin, queued, new Date());
    const running = await call(env, 'DELETE', `${base(p)}/backups/${queued}`, p.owner.auth);
    expect([running.status, running.body.code, running.body.message]).toEqual([409, 'backup_in_use', expect.stringMatching(/still being written \(running\)/)]);
    expect((await must(env, 'GET', `${base(p)}/backups`, p.owner.auth)).data[0]).toMatchObject({ id: queued, status: 'running' });
    await bq.backupFailed(env.ctx.db.admin, queued, { final: true, code: 'backup_failed', message: 'x', at: new Date() });
    // a failed attempt has no object: deleting it removes the row
    expect((await call(env, 'DELETE', `${base(p)}/backups/${queued}`, p.owner.auth)).status).toBe(200);

    const id = await backupNow(p);
    // a restore from it queued, not yet run
    const restore = await call(env, 'POST', `${base(p)}/backups/${id}/restore`, p.owner.auth, { into: 'new', name: 'Restored copy' });
    expect(restore.status).toBe(202);
    const busy = await call(env, 'DELETE', `${base(p)}/backups/${id}`, p.owner.auth);
    expect([busy.status, busy.body.code]).toEqual([409, 'backup_in_use']);
    expect(busy.body.message).toMatch(/restore from this backup is queued or running/);
    expect(existsSync(objectOf(p.id, id))).toBe(true);
    await drainJobs(env);
    expect((await must(env, 'GET', `${base(p)}/operations/${restore.body.data.id}`, p.owner.auth)).data).toMatchObject({ status: 'succeeded' });
    const done = await call(env, 'DELETE', `${base(p)}/backups/${id}`, p.owner.auth);
    expect(done.status).toBe(200);
    expect(existsSync(objectOf(p.id, id))).toBe(false);
    expect(await rowsOf(p.id)).toEqual([]);
  });
});

describe('deleting a project', () => {
  it("removes its stored backups' objects from the node's storage", async () => {
    const p = await project('Going away');
    const ids = [await backupNow(p), await backupNextDay(p)];
    const folder = path.join(env.config.storage.localDir, '_backups', p.id);
    expect(readdirSync(folder).sort()).toEqual(ids.map((id) => `${id}.plbk`).sort());
    // a project that stays keeps its own
    const other = await project('Staying');
    const kept = await backupNow(other);

    expect((await call(env, 'DELETE', base(p), p.owner.auth)).status).toBe(200);
    expect(existsSync(folder)).toBe(false);
    expect(await rowsOf(p.id)).toEqual([]);
    expect(existsSync(objectOf(other.id, kept))).toBe(true);
    expect(await rowsOf(other.id)).toEqual([kept]);
  });

  it("removes its stored backups' objects from the project's own bucket", async () => {
    const p = await project('Own bucket, going away');
    await s3.createBucket('going-away');
    await must(env, 'PATCH', `${base(p)}/storage`, p.owner.auth, {
      bucket: 'going-away', region: s3.region, endpoint: s3.endpoint, accessKeyId: FAKE_KEY.accessKeyId, secretAccessKey: FAKE_KEY.secretAccessKey, forcePathStyle: true,
    });
    const id = await backupNow(p);
    const key = `_backups/${p.id}/${id}.plbk`;
    const stored = await s3.client.send(new GetObjectCommand({ Bucket: 'going-away', Key: key }));
    expect((await stored.Body!.transformToByteArray()).length).toBeGreaterThan(45);

    expect((await call(env, 'DELETE', base(p), p.owner.auth)).status).toBe(200);
    const left = await s3.client.send(new ListObjectsV2Command({ Bucket: 'going-away', Prefix: '_backups/' }));
    expect(left.Contents ?? []).toEqual([]);
    expect(await rowsOf(p.id)).toEqual([]);
  });
});
