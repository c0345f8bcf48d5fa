/**
 * Scheduled backups (docs/backup.md "Scheduled backups"), through the dashboard API and the real
 * job handlers: schedules and their defaults; a minute's backups run once with two schedulers
 * and two workers; retention keeps exactly N daily + M weekly (fake clock); the stored object is
 * sealed (no document text in its bytes, no file route serves it) and opens to the archive;
 * restore over the project (after the confirmation) and into a new project equal the source
 * document by document, files included; a wrong confirmation changes nothing; a store that fails
 * leaves a visible `retrying` backup that the retry completes; another operator sees nothing;
 * progress of backups, exports and imports.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueDueBackups, requestBackup } from '../../../src/modules/backup/run-service.js';
import { startCron } from '../../../src/worker/cron.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, type TestProject } from '../../helpers/fixtures.js';
import { drainJobs } from '../../helpers/jobs.js';
import { FAKE_KEY, startFakeS3, type FakeS3 } from '../../fakes/s3.js';
import { upload } from '../storage/helpers.js';
import { apiProject, call, labelled, must, view } from './helpers.js';

let env: TestEnv;
let s3: FakeS3;

beforeAll(async () => {
  s3 = await startFakeS3({ now: () => env.clock.now() });
  env = await createTestEnv({ BACKUP_MAX_ATTEMPTS: '2' });
});
afterAll(async () => {
  await env?.close();
  await s3?.close();
});

const retryNow = () => sql`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE locked_at IS NULL`.execute(env.ctx.db.admin);
const base = (p: TestProject) => `/api/projects/${p.id}`;
const backups = async (p: TestProject) => (await must(env, 'GET', `${base(p)}/backups`, p.owner.auth)).data as Array<Record<string, any>> // eslint-disable-line @typescript-eslint/no-explicit-any -- the answer as JSON;

/** A project built through the API: two collections, documents (one soft-deleted), an end user, a file. */
async function sample(name = 'Backed up') {
  const owner = await makeOperator(env.ctx, { plan: 'pro' });
  const p = await apiProject(env, owner, name);
  await must(env, 'POST', `${base(p)}/collections`, owner.auth, { name: 'users', schema: [{ key: 'email', type: 'String', required: true, unique: true }, { key: 'password', type: 'String', required: true }, { key: 'name', type: 'String' }] });
  await must(env, 'POST', `${base(p)}/collections`, owner.auth, { name: 'notes', schema: [{ key: 'k', type: 'String' }, { key: 'text', type: 'String' }, { key: 'n', type: 'Number' }] });
  await must(env, 'POST', `${base(p)}/collections`, owner.auth, { name: 'tags', schema: [{ key: 'k', type: 'String' }, { key: 'label', type: 'String' }] });
  for (let i = 0; i < 30; i++) await must(env, 'POST', '/api/data/notes', p.sk, { k: `n${String(i).padStart(2, '0')}`, text: `secret-note-text-${i}`, n: i });
  const t = await must(env, 'POST', '/api/data/tags', p.sk, { k: 't1', label: 'alpha' });
  await must(env, 'DELETE', `/api/data/tags/${t._id}`, p.sk);
  await must(env, 'POST', '/api/userAuth/signup', p.pk, { email: `u${Date.now()}@example.com`, password: 'correct horse battery', name: 'U' });
  const file = await upload(env, p.sk, 'hello.txt', Buffer.from('file bytes of hello'), 'text/plain');
  if (file.res.statusCode !== 200) throw new Error(`upload ${file.res.body}`);
  return { p, filePath: file.filePath };
}

async function backupNow(p: TestProject) {
  const r = await call(env, 'POST', `${base(p)}/backups`, p.owner.auth);
  expect(r.status).toBe(202);
  await drainJobs(env);
  return r.body.data as { backupId: string; operationId: string };
}

/** "Run now" as the route does it, for dates at which the operator's token is not valid. */
async function runNow(p: TestProject) {
  await requestBackup(env.ctx, p.id);
  await drainJobs(env);
}

async function restore(p: TestProject, backupId: string, body: Record<string, unknown>) {
  const r = await call(env, 'POST', `${base(p)}/backups/${backupId}/restore`, p.owner.auth, body);
  if (r.status !== 202) return r;
  await drainJobs(env);
  const op = await must(env, 'GET', `${base(p)}/operations/${r.body.data.id}`, p.owner.auth);
  return { status: r.status, body: op, message: r.body.message as string };
}

describe('backup schedules', () => {
  it('default to daily on a paid plan and off on free; a custom cron is checked; the change is audited', async () => {
    const paid = await apiProject(env, await makeOperator(env.ctx, { plan: 'pro' }));
    const free = await apiProject(env, await makeOperator(env.ctx, { plan: 'free' }));
    const s = (await must(env, 'GET', `${base(paid)}/backups/schedule`, paid.owner.auth)).data;
    expect(s).toMatchObject({ preset: 'daily', timeZone: 'UTC', keepDaily: 7, keepWeekly: 4, isDefault: true });
    expect(s.cron).toMatch(/^\d{1,2} [0-5] \* \* \*$/);
    expect((await must(env, 'GET', `${base(free)}/backups/schedule`, free.owner.auth)).data).toMatchObject({ preset: 'off', cron: null, isDefault: true });

    const bad = await call(env, 'PUT', `${base(free)}/backups/schedule`, free.owner.auth, { preset: 'custom', cron: '61 * * *' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('backup_schedule_invalid');
    const noCron = await call(env, 'PUT', `${base(free)}/backups/schedule`, free.owner.auth, { preset: 'custom' });
    expect(noCron.body.code).toBe('backup_schedule_invalid');

    const set = await must(env, 'PUT', `${base(free)}/backups/schedule`, free.owner.auth, { preset: 'custom', cron: '30  2 * * 1', keepDaily: 3, keepWeekly: 2 });
    expect(set.data).toEqual({ preset: 'custom', cron: '30 2 * * 1', timeZone: 'UTC', keepDaily: 3, keepWeekly: 2, isDefault: false });
    expect((await must(env, 'GET', `${base(free)}/backups/schedule`, free.owner.auth)).data.cron).toBe('30 2 * * 1');
    const audit = await must(env, 'GET', `${base(free)}/audit?action=backup.schedule_update`, free.owner.auth);
    expect(audit.data.items).toHaveLength(1);
    expect(audit.data.items[0].after).toMatchObject({ preset: 'custom', cron: '30 2 * * 1' });
  });

  it('a minute\'s backups run once with two schedulers and two workers; a minute that does not match runs none', async () => {
    // (daily at 12:05: retention keeps one backup a day, so each run stays listed)
    const owner = await makeOperator(env.ctx, { plan: 'pro' });
    const p = await apiProject(env, owner, 'Every five');
    const off = await apiProject(env, owner, 'Off');
    await must(env, 'PUT', `${base(p)}/backups/schedule`, owner.auth, { preset: 'custom', cron: '5 12 * * *' });
    await must(env, 'PUT', `${base(off)}/backups/schedule`, owner.auth, { preset: 'off' });
    let now = Date.parse('2031-03-03T12:04:30Z');
    const opts = { log: env.ctx.log, now: () => now };
    const crontab = '* * * * * backups:schedule';
    const a = startCron(env.ctx.db.pool, crontab, opts);
    const b = startCron(env.ctx.db.pool, crontab, opts); // a second worker process
    try {
      for (const minute of ['03T12:05', '03T12:06', '04T12:05']) {
        now = Date.parse(`2031-03-${minute}:00.001Z`);
        await Promise.all([a.tick(), b.tick()]);
        await retryNow(); // the crontab's job is for 2031 (the fake clock): due now
        await Promise.all([drainJobs(env), drainJobs(env)]);
        // the same minute scheduled again (a retried job, a third process): nothing more
        await enqueueDueBackups(env.ctx, Date.parse(`2031-03-${minute}:00Z`));
        await Promise.all([drainJobs(env), drainJobs(env)]);
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    const list = await backups(p);
    expect(list.map((x) => [x.trigger, x.status, x.createdAt, x.attempts])).toEqual([
      ['schedule', 'succeeded', '2031-03-04T12:05:00.000Z', 1],
      ['schedule', 'succeeded', '2031-03-03T12:05:00.000Z', 1],
    ]);
    expect(await backups(off)).toEqual([]);
  });
});

describe('stored backups', () => {
  it('are sealed: no document text in the stored bytes, no file route serves them, and the download opens to the archive', async () => {
    const { p } = await sample();
    const { backupId, operationId } = await backupNow(p);
    const [b] = await backups(p);
    expect(b).toMatchObject({ id: backupId, status: 'succeeded', trigger: 'manual', attempts: 1, storage: 'internal', error: null, counts: { collections: 3, documents: 31, users: 1, files: 1 } });
    const stored = readFileSync(path.join(env.config.storage.localDir, '_backups', p.id, `${backupId}.plbk`));
    expect(b!.size).toBe(stored.length);
    expect(stored.subarray(0, 8).toString('latin1')).toBe('PLNTHSB1');
    expect(stored.includes(Buffer.from('secret-note-text-7'))).toBe(false);
    // not gzip either: nothing of it decompresses
    expect(() => gunzipSync(stored.subarray(45))).toThrow();
    for (const url of [`/api/storage/public/_backups/${p.id}/${backupId}.plbk`, `/api/storage/public/${p.id}/_backups/${backupId}.plbk`]) {
      const res = await env.app.inject({ method: 'GET', url, headers: p.sk });
      expect([403, 404]).toContain(res.statusCode);
    }
    const dl = await env.app.inject({ method: 'GET', url: `${base(p)}/backups/${backupId}/download`, headers: p.owner.auth });
    expect(dl.statusCode).toBe(200);
    expect(dl.headers['content-type']).toBe('application/gzip');
    const lines = gunzipSync(dl.rawPayload).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: 'header', format: 'plinth-project-archive', version: 3 });
    expect(lines.filter((l) => l.type === 'document' && l.data.text === 'secret-note-text-7')).toHaveLength(1);
    expect(lines.at(-1)).toMatchObject({ type: 'end', counts: { documents: 31 } });
    // the run's progress
    const op = (await must(env, 'GET', `${base(p)}/operations/${operationId}`, p.owner.auth)).data;
    expect(op).toMatchObject({ kind: 'backup', status: 'succeeded', percent: 100, phase: 'done', backupId });

    // one changed byte: the download fails rather than hand out altered data
    const tampered = Buffer.from(stored);
    tampered[tampered.length - 100]! ^= 1;
    writeFileSync(path.join(env.config.storage.localDir, '_backups', p.id, `${backupId}.plbk`), tampered);
    const bad = await env.app.inject({ method: 'GET', url: `${base(p)}/backups/${backupId}/download`, headers: p.owner.auth });
    expect(() => gunzipSync(bad.rawPayload)).toThrow();
    const r = await restore(p, backupId, { into: 'new' });
    expect(r.body.data).toMatchObject({ status: 'failed', error: { code: 'backup_unreadable' } });
  });

  it('restore over the same project (named in the confirmation) brings back every document, user and file record', async () => {
    const { p } = await sample('Roll back');
    const before = await view(env, p);
    const { backupId } = await backupNow(p);
    // the accident: documents changed and deleted, a collection dropped
    const notes = before.docs.notes as Array<{ _id: string }>;
    await must(env, 'PATCH', `/api/data/notes/${notes[0]!._id}`, p.sk, { text: 'changed' });
    await must(env, 'DELETE', `/api/data/notes/${notes[1]!._id}?hard=true`, p.sk);
    await must(env, 'DELETE', `${base(p)}/collections/tags`, p.owner.auth);
    expect(await view(env, p)).not.toEqual(before);

    // a wrong confirmation: 400 with a stable code naming what would be replaced, and nothing queued
    const wrong = await call(env, 'POST', `${base(p)}/backups/${backupId}/restore`, p.owner.auth, { into: 'same', confirm: 'Roll  back?' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('restore_confirmation_mismatch');
    expect(wrong.body.replaces).toEqual({ project: 'Roll back', counts: { collections: 2, documents: 29, users: 1, files: 1 } });
    await drainJobs(env);
    expect((await must(env, 'GET', `${base(p)}/operations`, p.owner.auth)).data.filter((o: { kind: string }) => o.kind === 'restore')).toEqual([]);
    const missing = await call(env, 'POST', `${base(p)}/backups/${backupId}/restore`, p.owner.auth, { into: 'same' });
    expect(missing.body.code).toBe('restore_confirmation_mismatch');
    expect((await view(env, p)).docs.notes).toHaveLength(29);

    const preview = (await must(env, 'GET', `${base(p)}/backups/${backupId}`, p.owner.auth)).data;
    expect(preview.replaces).toEqual({ project: { id: p.id, name: 'Roll back' }, counts: { collections: 2, documents: 29, users: 1, files: 1 } });
    const r = await restore(p, backupId, { into: 'same', confirm: 'Roll back' });
    expect(r.body.data).toMatchObject({ kind: 'restore', status: 'succeeded', percent: 100, error: null });
    // the answer says what happens to files, which a backup does not hold
    expect('message' in r && r.message).toMatch(/A backup holds file records, not file contents: stored files are left as they are/);
    expect(await view(env, p)).toEqual(before);
  });

  it('restore into a new project makes a copy equal to the source, file bytes included', async () => {
    const { p, filePath } = await sample('Source');
    const before = await view(env, p);
    const { backupId } = await backupNow(p);
    const r = await restore(p, backupId, { into: 'new', name: 'Copy of source' });
    expect(r.body.data).toMatchObject({ status: 'succeeded', detail: { into: 'new', files: { copied: 1, missing: 0 } } });
    expect('message' in r && r.message).toMatch(/A backup holds file records, not file contents: the new project's files are copied from this project's storage as they are now/);
    const copyId = r.body.data.targetProjectId as string;
    const project = (await must(env, 'GET', `/api/projects/${copyId}`, p.owner.auth)).data;
    expect(project.name).toBe('Copy of source');
    const keys = await must(env, 'POST', `/api/projects/${copyId}/api-key`, p.owner.auth, { keyType: 'secret' });
    const sk = { 'x-api-key': keys.data.apiKey as string };
    const copy: TestProject = { ...p, id: copyId, sk, secretKey: sk['x-api-key'] };
    expect(labelled(await view(env, copy))).toEqual(labelled(before));
    const name = filePath.slice(filePath.indexOf('/') + 1);
    expect(readFileSync(path.join(env.config.storage.localDir, copyId, name), 'utf8')).toBe('file bytes of hello');
  });

  it('another operator cannot list, download or restore a project\'s backups', async () => {
    const { p } = await sample('Private');
    const { backupId } = await backupNow(p);
    const other = await makeOperator(env.ctx, { plan: 'pro' });
    for (const [method, url, body] of [
      ['GET', `${base(p)}/backups`, undefined],
      ['GET', `${base(p)}/backups/${backupId}`, undefined],
      ['GET', `${base(p)}/backups/${backupId}/download`, undefined],
      ['POST', `${base(p)}/backups/${backupId}/restore`, { into: 'new' }],
      ['POST', `${base(p)}/backups/${backupId}/restore`, { into: 'same', confirm: 'Private' }],
      ['POST', `${base(p)}/backups`, undefined],
      ['GET', `${base(p)}/operations`, undefined],
    ] as const) {
      const r = await call(env, method, url, other.auth, body);
      expect([method, url, r.status]).toEqual([method, url, 404]);
    }
    // their own project does not reach it by id either
    const theirs = await apiProject(env, other, 'Theirs');
    expect((await call(env, 'GET', `${base(theirs)}/backups/${backupId}/download`, other.auth)).status).toBe(404);
    expect((await call(env, 'POST', `${base(theirs)}/backups/${backupId}/restore`, other.auth, { into: 'new' })).status).toBe(404);
    expect((await must(env, 'GET', `/api/projects`, other.auth)).data.map((x: { name: string }) => x.name)).toEqual(['Theirs']);
  });
});

describe('retention', () => {
  it('keeps exactly N daily and M weekly backups (fake clock, 40 days of daily backups)', async () => {
    const owner = await makeOperator(env.ctx, { plan: 'pro' });
    const p = await apiProject(env, owner, 'Retained');
    await must(env, 'POST', `${base(p)}/collections`, owner.auth, { name: 'notes', schema: [{ key: 'k', type: 'String' }] });
    await must(env, 'POST', '/api/data/notes', p.sk, { k: 'a' });
    await must(env, 'PUT', `${base(p)}/backups/schedule`, owner.auth, { preset: 'daily', keepDaily: 3, keepWeekly: 2 });
    const start = Date.parse('2031-01-01T04:00:00Z'); // a Wednesday
    try {
      for (let day = 0; day < 40; day++) {
        env.clock.set(new Date(start + day * 86_400_000));
        await runNow(p); // the operator's token would have expired at the clock's date
      }
      // a second backup the same day: the newest of the day counts
      env.clock.set(new Date(start + 39 * 86_400_000 + 3_600_000));
      await runNow(p);
    } finally {
      env.clock.set(new Date());
    }
    const kept = (await backups(p)).filter((b) => b.status === 'succeeded').map((b) => b.createdAt);
    expect(kept).toEqual([
      '2031-02-09T05:00:00.000Z', // daily: Feb 9, 8, 7
      '2031-02-08T04:00:00.000Z',
      '2031-02-07T04:00:00.000Z',
      '2031-02-06T04:00:00.000Z', // weekly: the newest left of the week of Mon Feb 3 – Sun Feb 9, and of Jan 27 – Feb 2
      '2031-02-02T04:00:00.000Z',
    ]);
    const files = readdirOf(p.id);
    expect(files).toHaveLength(5);
  });
});

function readdirOf(projectId: string): string[] {
  return readdirSync(path.join(env.config.storage.localDir, '_backups', projectId));
}

describe('failures', () => {
  it('a backup whose store fails is retrying (code, attempts) and the retry stores it; out of attempts it stays failed', async () => {
    const owner = await makeOperator(env.ctx, { plan: 'pro' });
    const p = await apiProject(env, owner, 'Own bucket');
    await must(env, 'POST', `${base(p)}/collections`, owner.auth, { name: 'notes', schema: [{ key: 'k', type: 'String' }] });
    await must(env, 'POST', '/api/data/notes', p.sk, { k: 'a' });
    // the project's own bucket, not created yet
    const bucket = { bucket: 'later-bucket', region: s3.region, endpoint: s3.endpoint, accessKeyId: FAKE_KEY.accessKeyId, secretAccessKey: FAKE_KEY.secretAccessKey, forcePathStyle: true };
    await must(env, 'PATCH', `${base(p)}/storage`, owner.auth, bucket);
    const { backupId } = await backupNow(p);
    const [first] = await backups(p);
    expect(first).toMatchObject({ id: backupId, status: 'retrying', attempts: 1, maxAttempts: 2, error: { code: 'storage_failed' } });
    const op = (await must(env, 'GET', `${base(p)}/operations?active=true`, owner.auth)).data;
    expect(op).toMatchObject([{ kind: 'backup', status: 'retrying', attempts: 1, error: { code: 'storage_failed' } }]);
    await s3.createBucket('later-bucket');
    await retryNow();
    await drainJobs(env);
    const [second] = await backups(p);
    expect(second).toMatchObject({ id: backupId, status: 'succeeded', attempts: 2, error: null, storage: 'external' });
    const obj = await s3.client.send(new (await import('@aws-sdk/client-s3')).GetObjectCommand({ Bucket: 'later-bucket', Key: `_backups/${p.id}/${backupId}.plbk` }));
    const bytes = Buffer.from(await obj.Body!.transformToByteArray());
    expect(bytes.length).toBe(second!.size);
    const dl = await env.app.inject({ method: 'GET', url: `${base(p)}/backups/${backupId}/download`, headers: owner.auth });
    expect(gunzipSync(dl.rawPayload).toString()).toContain('"type":"end"');

    // a store that cannot be reached at all: both attempts fail, the backup stays failed
    await must(env, 'PATCH', `${base(p)}/storage`, owner.auth, { ...bucket, endpoint: 'http://127.0.0.1:1' });
    const again = await backupNow(p);
    await retryNow();
    await drainJobs(env);
    const [last] = await backups(p);
    expect(last).toMatchObject({ id: again.backupId, status: 'failed', attempts: 2, error: { code: 'storage_unavailable' } });
    const busy = await call(env, 'POST', `${base(p)}/backups`, owner.auth);
    expect(busy.status).toBe(202); // a failed backup does not block the next
    const notReady = await call(env, 'GET', `${base(p)}/backups/${again.backupId}/download`, owner.auth);
    expect([notReady.status, notReady.body.code]).toEqual([409, 'backup_not_ready']);
  });
});

describe('progress of imports and exports', () => {
  it('an export and an import through the dashboard leave operations with their progress', async () => {
    const { p } = await sample('Progress');
    const res = await env.app.inject({ method: 'GET', url: `${base(p)}/export`, headers: p.owner.auth });
    expect(res.statusCode).toBe(200);
    const target = await apiProject(env, p.owner, 'Target');
    const imp = await env.app.inject({ method: 'POST', url: `${base(target)}/import?newIds=true&dryRun=true`, headers: { ...p.owner.auth, 'content-type': 'application/gzip' }, payload: res.rawPayload });
    expect(imp.statusCode).toBe(200);
    const ops = (await must(env, 'GET', `${base(p)}/operations`, p.owner.auth)).data;
    expect(ops.find((o: { kind: string }) => o.kind === 'export')).toMatchObject({ status: 'succeeded', percent: 100 });
    const tops = (await must(env, 'GET', `${base(target)}/operations`, p.owner.auth)).data;
    expect(tops).toMatchObject([{ kind: 'import', status: 'succeeded', percent: 100, detail: { dryRun: true, newIds: true, counts: { documents: 31 } } }]);
  });
});
