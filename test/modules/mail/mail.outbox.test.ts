/**
 * Without a provider (the embedded default) mail goes to the dev outbox: stored, listed for
 * the operator, with simulated sent → delivered events through the webhook status machine.
 * System mails (ctx.mailer) take the same path, without using the project's quota.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { logsOf, mailEnv, mailUsage, send, setProjectMailKey, startMailTest, stopMailTest } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  env = await mailEnv(null);
  p = await makeProject(env.ctx);
});
afterAll(() => env.close());

describe('dev outbox', () => {
  it('stores the message, lists it for the owner only, and simulates sent → delivered', async () => {
    const res = await send(env, p, { to: 'dev@example.com', subject: 'Outbox', html: '<p>Hi</p>' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.provider).toBe('default');
    await drainJobs(env);
    const [log] = await logsOf(env, p.id);
    expect(log).toMatchObject({ status: 'delivered', provider: 'outbox' });
    const events = await env.ctx.db.admin.selectFrom('mail_events').select('type').where('email_id', '=', log!.provider_email_id!).execute();
    expect(events.map((e) => e.type).sort()).toEqual(['email.delivered', 'email.sent']);

    const list = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/mail/outbox`, headers: p.owner.auth });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.messages[0]).toMatchObject({ to: ['dev@example.com'], subject: 'Outbox', html: '<p>Hi</p>', lastEvent: 'delivered' });
    const other = await makeProject(env.ctx);
    expect((await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/mail/outbox`, headers: other.owner.auth })).statusCode).toBe(404);

    const live = await env.app.inject({ method: 'GET', url: `/api/mail/logs/${log!.provider_email_id}`, headers: p.sk });
    expect(live.json().data.providerStatus).toMatchObject({ id: log!.provider_email_id, last_event: 'delivered' });
  });

  it('system mail (auth OTP) goes through the same queue to the outbox, tagged, not charged', async () => {
    const q = await makeProject(env.ctx);
    await env.ctx.mailer.sendSystemMail({ projectId: q.id, to: 'user@example.com', subject: 'Your code', text: '123456', tag: 'auth.verify-email' });
    expect(await mailUsage(env, q.id)).toBe(0);
    const [queued] = await logsOf(env, q.id);
    expect(queued).toMatchObject({ status: 'queued', tag: 'auth.verify-email', charged: false });
    await drainJobs(env);
    expect((await logsOf(env, q.id))[0]!.status).toBe('delivered');
  });

  it('platform mail (operator OTP, projectId null) is queued and delivered to the outbox, invisible to tenants', async () => {
    await env.ctx.mailer.sendSystemMail({ projectId: null, to: 'op@example.com', subject: 'Operator code', text: '654321', tag: 'operator.otp' });
    await drainJobs(env);
    const row = await env.ctx.db.admin.selectFrom('mail_logs').selectAll().where('tag', '=', 'operator.otp').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ project_id: null, status: 'delivered', provider: 'outbox' });
    const box = await env.ctx.db.admin.selectFrom('mail_outbox').selectAll().where('mail_log_id', '=', row.id).executeTakeFirstOrThrow();
    expect(box.text).toBe('654321');
  });
});

describe('system mail with providers', () => {
  let fake: FakeResend;
  let penv: TestEnv;
  beforeAll(async () => {
    ({ fake, env: penv } = await startMailTest());
  });
  afterAll(() => stopMailTest(penv, fake));

  it("uses the project's own key when it has one, else the platform key; never the quota", async () => {
    const own = await makeProject(penv.ctx);
    const plain = await makeProject(penv.ctx);
    await setProjectMailKey(penv, own.id, 're_own_sys');
    await penv.ctx.mailer.sendSystemMail({ projectId: own.id, to: 'a@example.com', subject: 'otp', text: '1', tag: 'auth.otp' });
    await penv.ctx.mailer.sendSystemMail({ projectId: plain.id, to: 'b@example.com', subject: 'otp', text: '2', tag: 'auth.otp' });
    await penv.ctx.mailer.sendSystemMail({ projectId: null, to: 'c@example.com', subject: 'op', text: '3', tag: 'operator.otp' });
    await drainJobs(penv);
    expect(fake.sentBy('re_own_sys').map((e) => e.to[0])).toEqual(['a@example.com']);
    expect(fake.sentBy('re_platform_key').map((e) => e.to[0]).sort()).toEqual(['b@example.com', 'c@example.com']);
    expect(await mailUsage(penv, own.id)).toBe(0);
  });
});
