/**
 * Threat: forged or replayed delivery events rewriting mail logs. The raw body must carry a
 * valid Svix signature made with the right secret, within 5 minutes; a project's own secret
 * can only touch that project's own-key mail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { logsOf, mailEnv, postWebhook, PROJECT_SECRET, sentMail, setProjectMailKey, signedEvent, startMailTest, stopMailTest } from './helpers.js';

let fake: FakeResend;
let env: TestEnv;
let p: TestProject;
let emailId: string;

const statusOf = async (projectId: string) => (await logsOf(env, projectId)).at(-1)!.status;
const eventCount = async () => (await env.ctx.db.admin.selectFrom('mail_events').select('event_id').execute()).length;

beforeAll(async () => {
  ({ fake, env } = await startMailTest());
  p = await makeProject(env.ctx);
  ({ emailId } = await sentMail(env, p));
});
afterAll(() => stopMailTest(env, fake));

describe('webhook signature checks', () => {
  it('a correctly signed event is applied', async () => {
    const res = await postWebhook(env, signedEvent({ type: 'email.delivered', emailId }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, message: 'Event processed.' });
    expect(await statusOf(p.id)).toBe('delivered');
  });

  const forged: Array<[string, () => { body: string; headers: Record<string, string> }]> = [
    ['signed with another secret', () => signedEvent({ type: 'email.bounced', emailId, secret: PROJECT_SECRET })],
    ['body changed after signing', () => {
      const e = signedEvent({ type: 'email.delivered', emailId });
      return { ...e, body: e.body.replace('email.delivered', 'email.bounced') };
    }],
    ['no signature headers', () => {
      const e = signedEvent({ type: 'email.bounced', emailId });
      return { body: e.body, headers: { 'content-type': 'application/json' } };
    }],
    ['timestamp 10 minutes old', () => signedEvent({ type: 'email.bounced', emailId, timestamp: new Date(Date.now() - 10 * 60_000) })],
    ['garbage signature', () => {
      const e = signedEvent({ type: 'email.bounced', emailId });
      return { ...e, headers: { ...e.headers, 'svix-signature': 'v1,AAAA' } };
    }],
  ];
  it.each(forged)('400 and nothing processed: %s', async (_name, make) => {
    const before = await eventCount();
    const res = await postWebhook(env, make());
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, message: 'Webhook signature verification failed.' });
    expect(await statusOf(p.id)).toBe('delivered');
    expect(await eventCount()).toBe(before);
  });

  it("the 5-minute window follows the app's clock too", async () => {
    env.clock.advance(6 * 60_000);
    try {
      const res = await postWebhook(env, signedEvent({ type: 'email.bounced', emailId }));
      expect(res.statusCode).toBe(400);
    } finally {
      env.clock.advance(-6 * 60_000);
    }
  });

  it('a non-JSON content type is refused without processing', async () => {
    const e = signedEvent({ type: 'email.bounced', emailId });
    const res = await env.app.inject({ method: 'POST', url: '/api/mail/webhook', headers: { ...e.headers, 'content-type': 'text/plain' }, payload: e.body });
    expect(res.statusCode).toBe(415);
    expect(await statusOf(p.id)).toBe('delivered');
  });
});

describe('per-project secrets (own-key projects)', () => {
  it('PUT …/mail/webhook-secret: owner only, validated, stored encrypted', async () => {
    const url = `/api/projects/${p.id}/mail/webhook-secret`;
    const stranger = await makeProject(env.ctx);
    expect((await env.app.inject({ method: 'PUT', url, headers: stranger.owner.auth, payload: { secret: PROJECT_SECRET } })).statusCode).toBe(404);
    expect((await env.app.inject({ method: 'PUT', url, headers: p.owner.auth, payload: { secret: 'not-a-secret' } })).statusCode).toBe(400);
    const ok = await env.app.inject({ method: 'PUT', url, headers: p.owner.auth, payload: { secret: PROJECT_SECRET } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data).toMatchObject({ hasWebhookSecret: true, webhookUrl: expect.stringContaining(`?projectId=${p.id}`) });
    const row = await env.ctx.db.admin.selectFrom('projects').select('secrets').where('id', '=', p.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row.secrets)).not.toContain(PROJECT_SECRET);
  });

  it("a project's secret moves its own-key mail, but never platform-key mail or other projects' mail", async () => {
    const own = await makeProject(env.ctx);
    await setProjectMailKey(env, own.id, 're_own_for_webhooks');
    await env.app.inject({ method: 'PUT', url: `/api/projects/${own.id}/mail/webhook-secret`, headers: own.owner.auth, payload: { secret: PROJECT_SECRET } });
    const { emailId: ownEmail } = await sentMail(env, own);

    const applied = await postWebhook(env, signedEvent({ type: 'email.delivered', emailId: ownEmail, secret: PROJECT_SECRET }), `?projectId=${own.id}`);
    expect(applied.statusCode).toBe(200);
    expect(await statusOf(own.id)).toBe('delivered');

    // Same project secret aimed at p's platform-key mail, through own's URL: no effect.
    await postWebhook(env, signedEvent({ type: 'email.complained', emailId, secret: PROJECT_SECRET }), `?projectId=${own.id}`);
    expect(await statusOf(p.id)).toBe('delivered');
    // The platform secret cannot move own-key mail either.
    await postWebhook(env, signedEvent({ type: 'email.complained', emailId: ownEmail }));
    expect(await statusOf(own.id)).toBe('delivered');
  });

  it('no secret configured → 200 "ignored", nothing processed (platform without MAIL_WEBHOOK_SECRET, project without one)', async () => {
    const bare = await makeProject(env.ctx);
    const res = await postWebhook(env, signedEvent({ type: 'email.bounced', emailId }), `?projectId=${bare.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, message: 'Webhook ignored: no secret configured' });
    expect(await statusOf(p.id)).toBe('delivered');

    const noSecret = await mailEnv(fake, { MAIL_WEBHOOK_SECRET: '' });
    try {
      const r = await postWebhook(noSecret, signedEvent({ type: 'email.bounced', emailId }));
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual({ success: true, message: 'Webhook ignored: no secret configured' });
    } finally {
      await noSecret.close();
    }
  });
});
