/**
 * Delivery events move MailLogs per docs/mail.md; repeated and out-of-order deliveries
 * are harmless (idempotent by svix-id; a log never moves back in time).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { logsOf, postWebhook, runDueJobs, send, sentMail, signedEvent, startMailTest, stopMailTest } from './helpers.js';

let fake: FakeResend;
let env: TestEnv;
let p: TestProject;

async function statusOf(logId: string) {
  return (await env.ctx.db.admin.selectFrom('mail_logs').select('status').where('id', '=', logId).executeTakeFirstOrThrow()).status;
}

const at = (s: number) => new Date(Date.now() - 60_000 + s * 1000);

beforeAll(async () => {
  ({ fake, env } = await startMailTest());
  p = await makeProject(env.ctx);
});
afterAll(() => stopMailTest(env, fake));

describe('event → status', () => {
  it.each([
    ['email.sent', 'sent'],
    ['email.delivered', 'delivered'],
    ['email.bounced', 'bounced'],
    ['email.complained', 'complained'],
    ['email.delivery_delayed', 'queued'],
    ['email.failed', 'failed'],
  ])('%s → %s', async (type, status) => {
    const { emailId, logId } = await sentMail(env, p);
    const res = await postWebhook(env, signedEvent({ type, emailId }));
    expect(res.statusCode).toBe(200);
    expect(await statusOf(logId)).toBe(status);
  });

  it('a created_at before year 1 (valid in JS, not in the database) falls back to the signing time', async () => {
    const { emailId, logId } = await sentMail(env, p);
    const body = JSON.stringify({ type: 'email.delivered', created_at: '-271821-04-20T00:00:00.000Z', data: { email_id: emailId } });
    const res = await postWebhook(env, signedEvent({ type: 'email.delivered', emailId, body }));
    expect(res.statusCode).toBe(200);
    expect(await statusOf(logId)).toBe('delivered');
  });

  it('unknown event types and unknown ids are acknowledged and ignored', async () => {
    const { emailId, logId } = await sentMail(env, p);
    const r1 = await postWebhook(env, signedEvent({ type: 'email.opened', emailId }));
    expect(r1.json()).toEqual({ success: true, message: 'Event ignored.' });
    const r2 = await postWebhook(env, signedEvent({ type: 'email.delivered', emailId: '00000000-0000-4000-8000-000000000000' }));
    expect(r2.statusCode).toBe(200);
    expect(await statusOf(logId)).toBe('sent');
  });

  it('a validly signed body that is not an event object (null, a number) is ignored, not a 500', async () => {
    for (const body of ['null', '42', '{"type":"email.delivered","data":null}']) {
      const res = await postWebhook(env, signedEvent({ type: '', emailId: '', body }));
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, message: 'Event ignored.' });
    }
  });
});

describe('replay and reordering', () => {
  it('the same event delivered twice is applied once', async () => {
    const { emailId, logId } = await sentMail(env, p);
    const ev = signedEvent({ type: 'email.delivered', emailId, createdAt: at(2) });
    expect((await postWebhook(env, ev)).json().message).toBe('Event processed.');
    expect((await postWebhook(env, ev)).json()).toEqual({ success: true, message: 'Event already processed.' });
    expect(await statusOf(logId)).toBe('delivered');
    const stored = await env.ctx.db.admin.selectFrom('mail_events').selectAll().where('email_id', '=', emailId).execute();
    expect(stored).toHaveLength(1);
  });

  it('an older event arriving late never moves the log back (delivered, then sent / delivery_delayed)', async () => {
    const { emailId, logId } = await sentMail(env, p);
    await postWebhook(env, signedEvent({ type: 'email.delivered', emailId, createdAt: at(3) }));
    await postWebhook(env, signedEvent({ type: 'email.sent', emailId, createdAt: at(1) }));
    await postWebhook(env, signedEvent({ type: 'email.delivery_delayed', emailId, createdAt: at(2) }));
    expect(await statusOf(logId)).toBe('delivered');
    // A newer event still applies.
    await postWebhook(env, signedEvent({ type: 'email.complained', emailId, createdAt: at(9) }));
    expect(await statusOf(logId)).toBe('complained');
  });

  it('a replay of an old event after newer ones changes nothing', async () => {
    const { emailId, logId } = await sentMail(env, p);
    const delayed = signedEvent({ type: 'email.delivery_delayed', emailId, createdAt: at(1) });
    await postWebhook(env, delayed);
    expect(await statusOf(logId)).toBe('queued');
    await postWebhook(env, signedEvent({ type: 'email.delivered', emailId, createdAt: at(5) }));
    await postWebhook(env, delayed);
    expect(await statusOf(logId)).toBe('delivered');
  });

  it('events with the same timestamp resolve by rank (delivered beats sent)', async () => {
    const { emailId, logId } = await sentMail(env, p);
    const same = at(4);
    await postWebhook(env, signedEvent({ type: 'email.delivered', emailId, createdAt: same }));
    await postWebhook(env, signedEvent({ type: 'email.sent', emailId, createdAt: same }));
    expect(await statusOf(logId)).toBe('delivered');
  });

  it('events that arrive before the worker recorded the provider id are applied when it does', async () => {
    fake.failNext({ mode: 'drop', path: /^\/emails$/ });
    await send(env, p, { to: 'a@example.com', subject: 'early', text: 't' });
    await drainJobs(env);
    const log = (await logsOf(env, p.id)).at(-1)!;
    expect(log.provider_email_id).toBeNull();
    const emailId = [...fake.emails.values()].at(-1)!.id;
    await postWebhook(env, signedEvent({ type: 'email.delivered', emailId }));
    expect(await statusOf(log.id)).toBe('queued');
    await runDueJobs(env);
    expect(await statusOf(log.id)).toBe('delivered');
  });
});
