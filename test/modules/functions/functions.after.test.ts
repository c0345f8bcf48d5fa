/**
 * After-hooks and schedules end to end, against the real database and the real job tasks:
 * collection changes through the change stream and the dispatcher, one job per (hook, change)
 * run as nobody writing with plinth.data.service; at least once with retries and the same
 * event.id; the last failure kept in the invocation log; auth events (sign-up by password, as a
 * guest and by magic link, sign-in, deletion) in the auth flows' transactions; a schedule that runs once per tick with
 * two schedulers and two workers; disabled functions; another project's changes.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchBatch } from '../../../src/modules/webhooks/dispatcher.js';
import { enqueueSchedules, cronMatches, tickOf } from '../../../src/modules/functions/schedules.js';
import { startCron } from '../../../src/worker/cron.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { drainJobs } from '../../helpers/jobs.js';
import { createCollection } from '../data/helpers.js';
import type { SystemMail } from '../../../src/context.js';
import { authProject, captureMail, PASSWORD, uniqueEmail } from '../auth/helpers.js';

let env: TestEnv;
let p: TestProject;
let other: TestProject;
let mail: SystemMail[];

async function deploy(project: TestProject, body: Record<string, unknown>) {
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/functions`, headers: project.owner.auth, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; name: string };
}
async function write(project: TestProject, method: 'POST' | 'PATCH' | 'DELETE', path: string, payload?: unknown) {
  const res = await env.app.inject({ method, url: `/api/data/${path}`, headers: project.sk, ...(payload !== undefined ? { payload: payload as object } : {}) });
  expect(res.statusCode, res.body).toBeLessThan(300);
  const body = res.statusCode === 204 ? {} : res.json();
  return (body.data ?? body) as { _id: string };
}
async function docs(project: TestProject, collection: string): Promise<Array<Record<string, unknown>>> {
  const res = await env.app.inject({ method: 'GET', url: `/api/data/${collection}?limit=100`, headers: project.sk });
  const d = res.json().data;
  const items = (Array.isArray(d) ? d : d.items) as Array<Record<string, unknown>>;
  // in the order written
  return items.sort((x, y) => String(x.createdAt).localeCompare(String(y.createdAt)) || String(x._id).localeCompare(String(y._id)));
}
/** The dispatcher (as the worker's loop runs it), then every job that is due. */
async function settle() {
  // every change written so far dispatched (a change is final once no older transaction runs)
  const end = Date.now() + 10_000;
  for (;;) {
    while ((await dispatchBatch(env.ctx)) > 0);
    const { rows } = await sql`SELECT 1 FROM changes, webhook_cursor w WHERE (changes.xid, changes.id) > (w.xid, w.id) LIMIT 1`.execute(env.ctx.db.admin);
    if (rows.length === 0) break;
    if (Date.now() > end) throw new Error('changes not dispatched');
    await new Promise((r) => setTimeout(r, 20));
  }
  await drainJobs(env);
  await env.ctx.functions.log.flush();
}
async function invocations(fnId: string) {
  const { rows } = await sql<{ ok: boolean; error: string | null; trigger: string }>`
    SELECT ok, error, trigger FROM function_invocations WHERE function_id = ${fnId} ORDER BY id`.execute(env.ctx.db.admin);
  return rows;
}
/** What graphile-worker's backoff would wait for: the retries made due now. */
const retryNow = () => sql`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE locked_at IS NULL`.execute(env.ctx.db.admin);

const AUDIT = `export default async (event, plinth) => {
  const d = event.document;
  await plinth.data.service.collection('audit').create({ eventId: event.id, type: event.type, collection: event.collection, noteId: d._id, text: d.text ?? null, at: event.at });
}`;

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  mail = captureMail(env);
  p = await makeProject(env.ctx);
  other = await makeProject(env.ctx);
  for (const project of [p, other]) await createCollection(env, project, 'notes', [{ key: 'text', type: 'String' }]);
  await createCollection(env, p, 'audit', [
    { key: 'eventId', type: 'String' },
    { key: 'type', type: 'String' },
    { key: 'collection', type: 'String' },
    { key: 'noteId', type: 'String' },
    { key: 'text', type: 'String' },
    { key: 'at', type: 'String' },
  ], { enabled: true, mode: 'private', ownerField: 'noteId' });
  await createCollection(env, p, 'items', [{ key: 'n', type: 'Number' }]);
  await createCollection(env, p, 'attempts', [{ key: 'eventId', type: 'String' }, { key: 'ok', type: 'Boolean' }]);
  await createCollection(env, p, 'ticks', [{ key: 'eventId', type: 'String' }, { key: 'scheduledAt', type: 'String' }]);
});
afterAll(() => env.close());

describe('after-hooks on collection changes', () => {
  let auditFn: { id: string };

  it('write an audit document with plinth.data.service on create, update and delete, once each', async () => {
    auditFn = await deploy(p, { name: 'audit-notes', kind: 'after', trigger: { collection: 'notes', events: ['create', 'update', 'delete'] }, source: AUDIT });
    // the collection streams its changes now, although no webhook or realtime asks for it
    const note = await write(p, 'POST', 'notes', { text: 'one' });
    await write(p, 'PATCH', `notes/${note._id}`, { text: 'two' });
    await write(p, 'DELETE', `notes/${note._id}`);
    await settle();
    const audit = await docs(p, 'audit');
    expect(audit.map((a) => [a.type, a.text, a.noteId, a.collection])).toEqual([
      ['create', 'one', note._id, 'notes'],
      ['update', 'two', note._id, 'notes'],
      ['delete', 'two', note._id, 'notes'], // the document before the delete
    ]);
    expect(new Set(audit.map((a) => a.eventId)).size).toBe(3);
    expect(audit.every((a) => typeof a.eventId === 'string' && String(a.eventId).startsWith('chg_'))).toBe(true);
    expect((await invocations(auditFn.id)).map((i) => [i.trigger, i.ok])).toEqual([
      ['after.create', true],
      ['after.update', true],
      ['after.delete', true],
    ]);
    // nothing runs twice: the jobs are gone, a second pass finds nothing
    await settle();
    expect(await docs(p, 'audit')).toHaveLength(3);
  });

  it("another project's changes never reach the project's hooks", async () => {
    await write(other, 'POST', 'notes', { text: 'elsewhere' });
    await settle();
    expect((await docs(p, 'audit')).some((a) => a.text === 'elsewhere')).toBe(false);
    expect(await invocations(auditFn.id)).toHaveLength(3);
  });

  it('a disabled hook does not run, and runs again once enabled', async () => {
    const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/functions/audit-notes`, headers: p.owner.auth, payload: { enabled: false } });
    expect(res.statusCode).toBe(200);
    await write(p, 'POST', 'notes', { text: 'while disabled' });
    await settle();
    expect(await invocations(auditFn.id)).toHaveLength(3);
    // disabled at deploy: never runs either
    const off = await deploy(p, { name: 'off', kind: 'after', enabled: false, trigger: { collection: 'notes' }, source: AUDIT });
    await write(p, 'POST', 'notes', { text: 'still disabled' });
    await settle();
    expect(await invocations(off.id)).toHaveLength(0);
    expect((await docs(p, 'audit')).map((a) => a.text)).not.toContain('still disabled');
    await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/functions/audit-notes`, headers: p.owner.auth, payload: { enabled: true } });
    await write(p, 'POST', 'notes', { text: 'enabled again' });
    await settle();
    expect((await docs(p, 'audit')).map((a) => a.text)).toContain('enabled again');
  });

  it('run at least once: a failure is retried with the same event.id, and each attempt is logged', async () => {
    const fn = await deploy(p, {
      name: 'flaky',
      kind: 'after',
      trigger: { collection: 'items', events: ['create'] },
      source: `export default async (event, plinth) => {
        const attempts = plinth.data.service.collection('attempts');
        const before = (await attempts.list()).items.filter((a) => a.eventId === event.id).length;
        await attempts.create({ eventId: event.id, ok: before > 0 });
        if (before === 0) throw new Error('first time fails');
      }`,
    });
    await write(p, 'POST', 'items', { n: 1 });
    await settle();
    expect(await invocations(fn.id)).toMatchObject([{ ok: false, error: expect.stringContaining('first time fails') }]);
    const { rows: jobs } = await sql<{ attempts: number; last_error: string; key: string }>`
      SELECT attempts, last_error, key FROM graphile_worker._private_jobs WHERE key LIKE ${`fn:${fn.id}:%`}`.execute(env.ctx.db.admin);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.attempts).toBe(1);
    expect(jobs[0]!.last_error).toMatch(/function_error/);
    await retryNow();
    await settle();
    const attempts = (await docs(p, 'attempts')).filter((a) => String(a.eventId).startsWith('chg_'));
    expect(attempts.map((a) => a.ok)).toEqual([false, true]);
    expect(attempts[0]!.eventId).toBe(attempts[1]!.eventId);
    expect((await invocations(fn.id)).map((i) => i.ok)).toEqual([false, true]);
    const { rows: left } = await sql`SELECT 1 FROM graphile_worker._private_jobs WHERE key LIKE ${`fn:${fn.id}:%`}`.execute(env.ctx.db.admin);
    expect(left).toHaveLength(0);
  });

  it('gives up after 5 attempts: every failure stays in the invocation log with its error', async () => {
    const fn = await deploy(p, { name: 'broken', kind: 'after', trigger: { collection: 'items' }, source: `export default () => { throw new Error('always'); }` });
    await write(p, 'POST', 'items', { n: 2 });
    await settle();
    for (let i = 0; i < 6; i++) {
      await retryNow();
      await settle();
    }
    const log = await invocations(fn.id);
    expect(log).toHaveLength(5);
    expect(log.every((i) => !i.ok && i.error === 'always')).toBe(true);
    const { rows } = await sql<{ attempts: number; max_attempts: number }>`
      SELECT attempts, max_attempts FROM graphile_worker._private_jobs WHERE key LIKE ${`fn:${fn.id}:%`}`.execute(env.ctx.db.admin);
    expect(rows).toEqual([{ attempts: 5, max_attempts: 5 }]);
    await env.app.inject({ method: 'DELETE', url: `/api/projects/${p.id}/functions/broken`, headers: p.owner.auth });
  });

  it('a change is enqueued once per hook even when dispatched twice (job key fn:<id>:<change id>)', async () => {
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM graphile_worker._private_jobs WHERE key LIKE 'fn:%'`.execute(env.ctx.db.admin);
    const before = Number(rows[0]!.n);
    const { enqueueRuns } = await import('../../../src/modules/functions/job-queries.js');
    const job = { projectId: p.id, functionId: auditFn.id, kind: 'after' as const, trigger: 'after.create', event: { id: 'chg_test' } };
    await enqueueRuns(env.ctx.db.admin, [{ key: `fn:${auditFn.id}:test`, job }, { key: `fn:${auditFn.id}:test`, job }]);
    await enqueueRuns(env.ctx.db.admin, [{ key: `fn:${auditFn.id}:test`, job }]);
    const { rows: after } = await sql<{ n: string }>`SELECT count(*) AS n FROM graphile_worker._private_jobs WHERE key LIKE 'fn:%'`.execute(env.ctx.db.admin);
    expect(Number(after[0]!.n)).toBe(before + 1);
    await sql`DELETE FROM graphile_worker._private_jobs WHERE key = ${`fn:${auditFn.id}:test`}`.execute(env.ctx.db.admin);
  });

  it('a deleted hook no longer makes its collection stream', async () => {
    const hasTrigger = async () => {
      const { rows } = await sql`SELECT 1 FROM pg_trigger t JOIN collections c ON t.tgname = 'dr_' || c.id WHERE c.project_id = ${p.id} AND c.name = 'items'`.execute(env.ctx.db.admin);
      return rows.length > 0;
    };
    expect(await hasTrigger()).toBe(true);
    const res = await env.app.inject({ method: 'DELETE', url: `/api/projects/${p.id}/functions/flaky`, headers: p.owner.auth });
    expect(res.statusCode).toBeLessThan(300);
    expect(await hasTrigger()).toBe(false);
  });
});

describe('after-hooks on auth events', () => {
  it('run on sign-up by password, as a guest and by magic link, on sign-in and on deletion, with the user and the method', async () => {
    const a = await authProject(env);
    expect((await env.app.inject({ method: 'PATCH', url: `/api/projects/${a.id}`, headers: a.owner.auth, payload: { allowAnonymous: true } })).statusCode).toBe(200);
    await createCollection(env, a, 'authlog', [
      { key: 'eventId', type: 'String' },
      { key: 'type', type: 'String' },
      { key: 'userId', type: 'String' },
      { key: 'email', type: 'String' },
      { key: 'method', type: 'String' },
      { key: 'keys', type: 'String' },
    ]);
    await deploy(a, {
      name: 'on-auth',
      kind: 'after',
      trigger: { auth: ['sign-up', 'sign-in', 'delete'] },
      source: `export default async (event, plinth) => {
        await plinth.data.service.collection('authlog').create({ eventId: event.id, type: event.type, userId: event.user.id, email: event.user.email ?? null, method: event.method, keys: Object.keys(event.user).sort().join(',') });
      }`,
    });
    const email = uniqueEmail();
    const signup = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: a.pk, payload: { email, password: PASSWORD } });
    expect(signup.statusCode, signup.body).toBe(201);
    const userId = signup.json().data.user._id as string;
    const guest = await env.app.inject({ method: 'POST', url: '/api/userAuth/anonymous', headers: a.pk });
    expect(guest.statusCode, guest.body).toBeLessThan(300);
    const login = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: a.pk, payload: { email, password: PASSWORD } });
    expect(login.statusCode, login.body).toBe(200);
    // a magic link: sign-up for a new address, sign-in for a known one
    const linkEmail = uniqueEmail('ml');
    const magicLink = async () => {
      env.clock.advance(61_000); // past the one-per-minute cooldown of the address
      expect((await env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/start', headers: a.pk, payload: { email: linkEmail } })).statusCode).toBe(200);
      const sent = [...mail].reverse().find((m) => m.to === linkEmail && m.tag === 'auth.passwordless')!;
      const link = new URL(/(https?:\/\/\S+)/.exec(sent.text ?? '')![1]!.replace(/\.$/, ''));
      const token = new URLSearchParams(link.hash.slice(1)).get('token')!;
      const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/verify', headers: a.pk, payload: { token } });
      expect(res.statusCode, res.body).toBe(200);
    };
    await magicLink();
    await magicLink();
    const del = await env.app.inject({ method: 'DELETE', url: `/api/projects/${a.id}/users/${userId}`, headers: a.owner.auth });
    expect(del.statusCode, del.body).toBeLessThan(300);
    await settle();
    const log = await docs(a, 'authlog');
    expect(log.map((l) => [l.type, l.method, l.email])).toEqual([
      ['sign-up', 'password', email],
      ['sign-up', 'guest', null],
      ['sign-in', 'password', email],
      ['sign-up', 'magic-link', linkEmail],
      ['sign-in', 'magic-link', linkEmail],
      ['delete', 'admin', email],
    ]);
    expect(log[0]!.userId).toBe(userId);
    expect(log[5]!.userId).toBe(userId);
    expect(String(log[0]!.keys)).not.toMatch(/password/i);
    expect(new Set(log.map((l) => l.eventId)).size).toBe(6);
    // the project's other hooks (p) saw none of this
    expect((await docs(p, 'audit')).some((x) => x.type === 'sign-up')).toBe(false);
  });
});

describe('schedules', () => {
  it('match their cron in UTC', () => {
    const t = Date.parse('2030-01-07T12:05:00Z'); // a Monday
    expect(cronMatches('*/5 * * * *', t)).toBe(true);
    expect(cronMatches('*/5 * * * *', t + 60_000)).toBe(false);
    expect(cronMatches('5 12 * * 1', t)).toBe(true);
    expect(cronMatches('5 12 * * 2', t)).toBe(false);
    expect(cronMatches('not a cron', t)).toBe(false);
    expect(tickOf({ _cron: { ts: '2030-01-07T12:05:00.000Z' } }, 0)).toBe(t);
    expect(tickOf({}, t + 1234)).toBe(t);
  });

  it('run once per tick, with two schedulers and two workers; a disabled schedule never', async () => {
    const fn = await deploy(p, {
      name: 'every-five',
      kind: 'schedule',
      trigger: { cron: '*/5 * * * *' },
      source: `export default async (event, plinth) => { await plinth.data.service.collection('ticks').create({ eventId: event.id, scheduledAt: event.scheduledAt }); }`,
    });
    const off = await deploy(p, { name: 'never', kind: 'schedule', enabled: false, trigger: { cron: '* * * * *' }, source: `export default () => 1` });
    let now = Date.parse('2030-01-07T12:04:30Z');
    const opts = { log: env.ctx.log, now: () => now };
    const crontab = '* * * * * functions:schedule';
    const a = startCron(env.ctx.db.pool, crontab, opts);
    const b = startCron(env.ctx.db.pool, crontab, opts); // a second worker process
    try {
      now = Date.parse('2030-01-07T12:05:00.001Z');
      await Promise.all([a.tick(), b.tick()]);
      await retryNow(); // the crontab's job is for 2030 (the fake clock): due now
      // the same minute scheduled again (a retried job, a third process): nothing more
      await enqueueSchedules(env.ctx, Date.parse('2030-01-07T12:05:00Z'));
      await Promise.all([drainJobs(env), drainJobs(env)]);
      await enqueueSchedules(env.ctx, Date.parse('2030-01-07T12:05:00Z'));
      await Promise.all([drainJobs(env), drainJobs(env)]);
      now = Date.parse('2030-01-07T12:06:00.001Z'); // not a fifth minute
      await Promise.all([a.tick(), b.tick()]);
      await retryNow();
      await Promise.all([drainJobs(env), drainJobs(env)]);
      now = Date.parse('2030-01-07T12:10:00.001Z');
      await Promise.all([a.tick(), b.tick()]);
      await retryNow();
      await Promise.all([drainJobs(env), drainJobs(env)]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    await env.ctx.functions.log.flush();
    const ticks = await docs(p, 'ticks');
    expect(ticks.map((t) => t.scheduledAt)).toEqual(['2030-01-07T12:05:00.000Z', '2030-01-07T12:10:00.000Z']);
    expect(new Set(ticks.map((t) => t.eventId)).size).toBe(2);
    expect((await invocations(fn.id)).map((i) => [i.trigger, i.ok])).toEqual([
      ['schedule', true],
      ['schedule', true],
    ]);
    expect(await invocations(off.id)).toHaveLength(0);
    // deleting a schedule drops its minute bookkeeping
    const known = () => sql`SELECT 1 FROM graphile_worker._private_known_crontabs WHERE identifier = ${`fn:${fn.id}`}`.execute(env.ctx.db.admin).then((r) => r.rows.length);
    expect(await known()).toBe(1);
    expect((await env.app.inject({ method: 'DELETE', url: `/api/projects/${p.id}/functions/every-five`, headers: p.owner.auth })).statusCode).toBe(200);
    expect(await known()).toBe(0);
  });
});
