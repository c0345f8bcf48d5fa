/**
 * Feature gating per docs/mail.md (shared key / own key free / own key Pro) for
 * audiences, contacts and broadcasts, and provider passthrough of status and message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { setProjectMailKey, startMailTest, stopMailTest } from './helpers.js';

let fake: FakeResend;
let env: TestEnv;
let shared: TestProject;
let ownFree: TestProject;
let ownPro: TestProject;

const call = (p: TestProject, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  env.app.inject({ method, url, headers: p.sk, payload });
const UUID = '11111111-2222-4333-8444-555555555555';

beforeAll(async () => {
  ({ fake, env } = await startMailTest());
  shared = await makeProject(env.ctx);
  ownFree = await makeProject(env.ctx);
  ownPro = await makeProject(env.ctx, await makeOperator(env.ctx, { plan: 'pro' }));
  await setProjectMailKey(env, ownFree.id, 're_own_free');
  await setProjectMailKey(env, ownPro.id, 're_own_pro', 'Pro Sender <news@pro.example>');
});
afterAll(() => stopMailTest(env, fake));

describe('audiences and contacts', () => {
  it('403 on the shared key (audiences and contacts have their own messages)', async () => {
    const a = await call(shared, 'GET', '/api/mail/audiences');
    expect(a.statusCode).toBe(403);
    expect(a.json().message).toMatch(/Audiences require a project mail key/);
    const c = await call(shared, 'GET', `/api/mail/audiences/${UUID}/contacts`);
    expect(c.statusCode).toBe(403);
    expect(c.json().message).toBe("Contacts require the project's own mail key.");
    expect((await env.app.inject({ method: 'GET', url: '/api/mail/audiences', headers: ownFree.pk })).statusCode).toBe(403);
  });

  it('work with the own key on the free plan, against the project account only', async () => {
    const created = await call(ownFree, 'POST', '/api/mail/audiences', { name: 'Newsletter' });
    expect(created.statusCode).toBe(200);
    const audienceId = created.json().data.id;
    expect(fake.requests.at(-1)!.key).toBe('re_own_free');
    expect((await call(ownFree, 'GET', '/api/mail/audiences')).json().data.data).toHaveLength(1);

    const contact = await call(ownFree, 'POST', `/api/mail/audiences/${audienceId}/contacts`, { email: 'x@example.com', firstName: 'X' });
    expect(contact.statusCode).toBe(200);
    const contactId = contact.json().data.id;
    expect((await call(ownFree, 'PATCH', `/api/mail/audiences/${audienceId}/contacts/${contactId}`, { unsubscribed: true })).statusCode).toBe(200);
    const list = await call(ownFree, 'GET', `/api/mail/audiences/${audienceId}/contacts`);
    expect(list.json().data.data[0]).toMatchObject({ email: 'x@example.com', unsubscribed: true });
    expect((await call(ownFree, 'DELETE', `/api/mail/audiences/${audienceId}/contacts/${contactId}`)).statusCode).toBe(200);
    expect((await call(ownFree, 'DELETE', `/api/mail/audiences/${audienceId}`)).statusCode).toBe(200);
  });

  it('400 for malformed audience or contact ids, before any provider call', async () => {
    const before = fake.requests.length;
    expect((await call(ownFree, 'GET', '/api/mail/audiences/nope/contacts')).statusCode).toBe(400);
    expect((await call(ownFree, 'PATCH', `/api/mail/audiences/${UUID}/contacts/nope`, {})).statusCode).toBe(400);
    expect((await call(ownFree, 'DELETE', '/api/mail/audiences/123')).statusCode).toBe(400);
    expect(fake.requests.length).toBe(before);
  });

  it("passes the provider's status and message through", async () => {
    const res = await call(ownFree, 'GET', `/api/mail/audiences/${UUID}/contacts`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ success: false, message: 'Audience not found' });
    fake.failNext({ status: 429, message: 'Too many requests. You can only make 2 requests per second.' });
    const limited = await call(ownFree, 'GET', '/api/mail/audiences');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().message).toMatch(/2 requests per second/);
  });
});

describe('broadcasts', () => {
  it('403 unless own key AND Pro (shared key, own key on free)', async () => {
    for (const p of [shared, ownFree]) {
      const res = await call(p, 'POST', '/api/mail/broadcasts', { audienceId: UUID, subject: 's', html: 'h' });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toMatch(/project mail key and the Pro plan are required/);
      expect((await call(p, 'GET', '/api/mail/broadcasts')).statusCode).toBe(403);
    }
  });

  it('400 when audienceId, subject or html is missing', async () => {
    const res = await call(ownPro, 'POST', '/api/mail/broadcasts', { subject: 's' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('audienceId, subject and html are required');
  });

  it('create (sender from providerFromEmail), schedule, list, get, send, delete with own key on Pro', async () => {
    const aud = (await call(ownPro, 'POST', '/api/mail/audiences', { name: 'All' })).json().data.id;
    const created = await call(ownPro, 'POST', '/api/mail/broadcasts', { audienceId: aud, subject: 'News', html: '<p>n</p>' });
    expect(created.statusCode).toBe(200);
    const id = created.json().data.id;
    const got = await call(ownPro, 'GET', `/api/mail/broadcasts/${id}`);
    expect(got.json().data).toMatchObject({ from: 'Pro Sender <news@pro.example>', status: 'draft' });

    const scheduledAt = new Date(Date.now() + 86_400_000).toISOString();
    const sched = await call(ownPro, 'POST', '/api/mail/broadcasts', { audienceId: aud, subject: 'Later', html: 'h', scheduledAt, from: 'Body <b@pro.example>' });
    const schedId = sched.json().data.id;
    expect((await call(ownPro, 'GET', `/api/mail/broadcasts/${schedId}`)).json().data).toMatchObject({ status: 'scheduled', from: 'Body <b@pro.example>' });

    expect((await call(ownPro, 'GET', '/api/mail/broadcasts')).json().data.data).toHaveLength(2);
    expect((await call(ownPro, 'POST', `/api/mail/broadcasts/${id}/send`)).statusCode).toBe(200);
    expect((await call(ownPro, 'GET', `/api/mail/broadcasts/${id}`)).json().data.status).toBe('sent');
    expect((await call(ownPro, 'DELETE', `/api/mail/broadcasts/${schedId}`)).statusCode).toBe(200);
    expect((await call(ownPro, 'GET', `/api/mail/broadcasts/${schedId}`)).statusCode).toBe(404);
  });

  it('send, batch and logs are open on every tier (shared key included)', async () => {
    for (const p of [shared, ownFree, ownPro]) {
      expect((await call(p, 'POST', '/api/mail/send', { to: 'a@example.com', subject: 's', text: 't' })).statusCode).toBe(200);
      expect((await call(p, 'POST', '/api/mail/send-batch', [{ to: 'a@example.com', subject: 's', text: 't' }])).statusCode).toBe(200);
      expect((await call(p, 'GET', '/api/mail/logs')).statusCode).toBe(200);
    }
  });
});
