/** POST /api/mail/send: validation (docs/mail.md), queueing, key selection, logs. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { logsOf, PLATFORM_KEY, send, setProjectMailKey, startMailTest, stopMailTest } from './helpers.js';

let fake: FakeResend;
let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ fake, env } = await startMailTest());
  p = await makeProject(env.ctx);
});
afterAll(() => stopMailTest(env, fake));
beforeEach(() => fake.reset());

describe('POST /api/mail/send: who may call', () => {
  it('401 without a key', async () => {
    const res = await send(env, p, { to: 'a@example.com', subject: 's', html: 'h' }, {});
    expect(res.statusCode).toBe(401);
  });

  it('403 with the publishable key, before the body is even looked at', async () => {
    const res = await send(env, p, { nonsense: true }, p.pk);
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toBe('Forbidden. This action requires a Secret Key (sk_live_...).');
  });
});

describe('POST /api/mail/send: 400s', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['missing to', { subject: 's', html: 'h' }, /to/],
    ['bad recipient', { to: 'not-an-email', subject: 's', html: 'h' }, /Invalid recipient email format/],
    ['more than 50 recipients', { to: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`), subject: 's', html: 'h' }, /to|50/],
    ['no subject (direct mode)', { to: 'a@example.com', html: '<p>x</p>' }, /Subject is required/],
    ['no content', { to: 'a@example.com', subject: 'Hi' }, /at least one of html or text/],
    ['nothing at all', { to: 'a@example.com' }, /Provide either/],
    ['both template fields', { to: 'a@example.com', templateId: 'a'.repeat(24), templateName: 'otp' }, /only one of templateId or templateName/],
    ['template not found', { to: 'a@example.com', templateName: 'no-such-template' }, /Template not found/],
    ['malformed template id', { to: 'a@example.com', templateId: 'xyz' }, /Invalid template id/],
    ['subject too long', { to: 'a@example.com', subject: 'x'.repeat(201), text: 't' }, /too long/],
  ];
  it.each(cases)('%s', async (_name, body, message) => {
    const res = await send(env, p, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ success: false, data: {} });
    expect(res.json().message).toMatch(message);
  });
});

describe('POST /api/mail/send: queued sending', () => {
  it('answers with the job id, provider and usage, logs `queued`, and the worker sends with the platform key', async () => {
    const res = await send(env, p, { to: 'Alice@example.com', subject: 'Hello', html: '<p>Hi</p>' });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ provider: 'default', monthlyUsage: 1, monthlyLimit: 100 });
    expect(data.id).toMatch(/^\d+$/);
    const [queued] = (await logsOf(env, p.id)).filter((l) => l.job_id === data.id);
    expect(queued).toMatchObject({ status: 'queued', provider_email_id: null, using_byok: false });
    expect(fake.emails.size).toBe(0); // asynchronous

    await drainJobs(env);
    const [sent] = (await logsOf(env, p.id)).filter((l) => l.job_id === data.id);
    expect(sent!.status).toBe('sent');
    const email = fake.emails.get(sent!.provider_email_id!);
    expect(email).toMatchObject({ key: PLATFORM_KEY, to: ['Alice@example.com'], subject: 'Hello', from: env.config.mail.from });
    expect(fake.requests.find((r) => r.path === '/emails')!.idempotencyKey).toBe(sent!.id);
  });

  it('accepts up to 50 recipients in one message', async () => {
    const to = Array.from({ length: 50 }, (_, i) => `u${i}@example.com`);
    const res = await send(env, p, { to, subject: 'Many', text: 'hi' });
    expect(res.statusCode).toBe(200);
    await drainJobs(env);
    expect([...fake.emails.values()][0]!.to).toHaveLength(50);
  });

  it('renders a system template: {{var}} escaped in html, {{{var}}} raw, url variables sanitised', async () => {
    const res = await send(env, p, {
      to: 'b@example.com',
      templateName: 'welcome',
      variables: { name: '<b>Bob</b>', projectName: 'Acme & Co', appUrl: 'javascript:alert(1)' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.templateUsed).toMatchObject({ key: 'welcome', scope: 'global' });
    await drainJobs(env);
    const email = [...fake.emails.values()][0]!;
    expect(email.subject).toBe('Welcome to Acme & Co');
    expect(email.html).toContain('Welcome, &lt;b&gt;Bob&lt;/b&gt;!');
    expect(email.html).toContain('Acme &amp; Co');
    expect(email.html).toContain('href=""');
    expect(email.text).toContain('Welcome, <b>Bob</b>!');
    const log = (await logsOf(env, p.id)).at(-1)!;
    expect(log.template_used).toBe('welcome');
  });
});

describe('key selection: own key (byok) vs platform key', () => {
  it('a project with its own key sends with it and says provider "byok"; clearing it goes back to the platform key', async () => {
    const own = await makeProject(env.ctx);
    await setProjectMailKey(env, own.id, 're_own_key_1', 'Own <own@example.org>');
    const res = await send(env, own, { to: 'c@example.com', subject: 'Own', text: 'x' });
    expect(res.json().data).toMatchObject({ provider: 'byok', monthlyLimit: 50_000 });
    await drainJobs(env);
    const mail = fake.sentBy('re_own_key_1');
    expect(mail).toHaveLength(1);
    expect(mail[0]!.from).toBe('Own <own@example.org>');
    expect(fake.sentBy(PLATFORM_KEY)).toHaveLength(0);
    expect((await logsOf(env, own.id))[0]).toMatchObject({ using_byok: true, provider: 'byok' });

    await setProjectMailKey(env, own.id, null);
    const again = await send(env, own, { to: 'c@example.com', subject: 'Shared', text: 'x' });
    expect(again.json().data.provider).toBe('default');
    await drainJobs(env);
    expect(fake.sentBy(PLATFORM_KEY)).toHaveLength(1);
  });
});

describe('key set through the projects API', () => {
  it('PATCH /api/projects/:id {providerApiKey} switches sending to the own key (and null switches back)', async () => {
    const q = await makeProject(env.ctx);
    const patch = (body: object) => env.app.inject({ method: 'PATCH', url: `/api/projects/${q.id}`, headers: q.owner.auth, payload: body });
    expect((await patch({ providerApiKey: 're_patched_key_1', providerFromEmail: 'Q <q@example.org>' })).statusCode).toBe(200);
    expect((await send(env, q, { to: 'g@example.com', subject: 'p', text: 't' })).json().data.provider).toBe('byok');
    await drainJobs(env);
    expect(fake.sentBy('re_patched_key_1')[0]!.from).toBe('Q <q@example.org>');
    expect((await patch({ providerApiKey: null })).statusCode).toBe(200);
    expect((await send(env, q, { to: 'g@example.com', subject: 'p', text: 't' })).json().data.provider).toBe('default');
  });
});

describe('logs', () => {
  it('GET /api/mail/logs returns the latest 50, newest first', async () => {
    const q = await makeProject(env.ctx);
    for (let i = 0; i < 52; i++) {
      env.clock.advance(1000);
      expect((await send(env, q, { to: 'd@example.com', subject: `n${i}`, text: 't' })).statusCode).toBe(200);
    }
    const res = await env.app.inject({ method: 'GET', url: '/api/mail/logs', headers: q.sk });
    expect(res.statusCode).toBe(200);
    const logs = res.json().data.logs;
    expect(logs).toHaveLength(50);
    expect(logs[0].subject).toBe('n51');
    expect(logs[49].subject).toBe('n2');
    expect(logs[0]).toMatchObject({ status: 'queued', usingByok: false, to: 'd@example.com' });
  });

  it('GET /api/mail/logs/:providerId: dbLog + live providerStatus; 400 bad id; 404 other project', async () => {
    const r = await makeProject(env.ctx);
    await send(env, r, { to: 'e@example.com', subject: 'live', text: 't' });
    await drainJobs(env);
    const log = (await logsOf(env, r.id))[0]!;
    const ok = await env.app.inject({ method: 'GET', url: `/api/mail/logs/${log.provider_email_id}`, headers: r.sk });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.dbLog).toMatchObject({ providerEmailId: log.provider_email_id, status: 'sent' });
    expect(ok.json().data.providerStatus).toMatchObject({ id: log.provider_email_id, last_event: 'sent' });

    const bad = await env.app.inject({ method: 'GET', url: '/api/mail/logs/not-a-uuid', headers: r.sk });
    expect(bad.statusCode).toBe(400);
    const other = await env.app.inject({ method: 'GET', url: `/api/mail/logs/${log.provider_email_id}`, headers: p.sk });
    expect(other.statusCode).toBe(404);
    const pk = await env.app.inject({ method: 'GET', url: `/api/mail/logs/${log.provider_email_id}`, headers: r.pk });
    expect(pk.statusCode).toBe(403);
  });

  it('dashboard equivalents check ownership before any provider call', async () => {
    const r = await makeProject(env.ctx);
    await send(env, r, { to: 'f@example.com', subject: 'dash', text: 't' });
    await drainJobs(env);
    const log = (await logsOf(env, r.id))[0]!;
    const list = await env.app.inject({ method: 'GET', url: `/api/projects/${r.id}/mail/logs`, headers: r.owner.auth });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.logs).toHaveLength(1);
    const live = await env.app.inject({ method: 'GET', url: `/api/projects/${r.id}/mail/logs/${log.provider_email_id}/live`, headers: r.owner.auth });
    expect(live.json().data.providerStatus.id).toBe(log.provider_email_id);

    fake.requests.length = 0;
    const stranger = await env.app.inject({ method: 'GET', url: `/api/projects/${r.id}/mail/logs/${log.provider_email_id}/live`, headers: p.owner.auth });
    expect(stranger.statusCode).toBe(404);
    expect(fake.requests).toHaveLength(0);
    const anon = await env.app.inject({ method: 'GET', url: `/api/projects/${r.id}/mail/logs` });
    expect(anon.statusCode).toBe(401);
  });
});
