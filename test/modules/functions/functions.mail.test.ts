/**
 * plinth.mail end to end: HTTP functions deployed through the dashboard API send mail through
 * the same service as POST /api/mail/send, and what a user sees is checked where they would
 * see it: the project's dev outbox (the operator's mailbox without a provider) and its mail
 * logs. Non-ASCII subjects and bodies; a template; the mail API's own error codes reaching the
 * function (an invalid message, the monthly quota) and the client getting the answer the
 * function chose; the project a function sends as is its own whatever it passes; the
 * per-invocation mail limit; an idempotency key shared with the route's; an after-hook that
 * fails after sending and is retried mails once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { drainJobs } from '../../helpers/jobs.js';
import { KIND_HOST_LIMITS } from '../../../src/modules/functions/limits.js';
import { dispatchBatch } from '../../../src/modules/webhooks/dispatcher.js';
import { createCollection } from '../data/helpers.js';
import { logsOf, mailUsage, send } from '../mail/helpers.js';

/** Every project's monthly mail limit in this file (MAIL_MONTHLY_LIMIT), above the HTTP kind's per-invocation limit. */
const MONTHLY = 50;
const PER_CALL = KIND_HOST_LIMITS.http.mails;

let env: TestEnv;

beforeAll(async () => {
  expect(2 * PER_CALL).toBeLessThan(MONTHLY);
  env = await createTestEnv({ MAIL_MONTHLY_LIMIT: String(MONTHLY) });
});
afterAll(() => env.close());

async function deploy(project: TestProject, name: string, source: string, kind = 'http', trigger: Record<string, unknown> = {}) {
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/functions`, headers: project.owner.auth, payload: { name, kind, trigger, source } });
  expect(res.statusCode, res.body).toBe(201);
}
async function call(project: TestProject, name: string, payload: unknown, headers: Record<string, string> = project.pk) {
  const res = await env.app.inject({ method: 'POST', url: `/api/functions/${name}`, headers, payload: payload as object });
  return { status: res.statusCode, body: res.json() };
}
async function outbox(project: TestProject) {
  await drainJobs(env);
  const res = await env.app.inject({ method: 'GET', url: `/api/projects/${project.id}/mail/outbox`, headers: project.owner.auth });
  expect(res.statusCode).toBe(200);
  return res.json().data.messages as Array<{ to: string[]; subject: string; html: string | null; text: string | null; lastEvent: string }>;
}
async function apiLogs(project: TestProject) {
  const res = await env.app.inject({ method: 'GET', url: '/api/mail/logs', headers: project.sk });
  return res.json().data.logs as Array<{ to: string | string[]; subject: string; status: string; templateUsed?: string | null }>;
}
async function lastInvocation(project: TestProject) {
  await env.ctx.functions.log.flush();
  const { rows } = await sql<{ ok: boolean; error_code: string | null }>`
    SELECT ok, error_code FROM function_invocations WHERE project_id = ${project.id} ORDER BY id DESC LIMIT 1`.execute(env.ctx.db.admin);
  return rows[0];
}

/** Sends what the request's body says, as the function's caller asked. */
const MAILER = `export default async (req, plinth) => plinth.mail.send(req.body);`;

describe('plinth.mail.send from an HTTP function', () => {
  let p: TestProject;
  beforeAll(async () => {
    p = await makeProject(env.ctx);
    await deploy(p, 'mailer', MAILER);
  });

  it('queues the mail as the API does: the client gets its answer, the outbox and the logs show it', async () => {
    const subject = 'Grüße aus Zürich — 東京の夜 🎉';
    const text = 'Ça marche : crème brûlée, Ελληνικά, 日本語, emoji 👩‍💻.\nZweite Zeile.';
    const html = '<p>Ça marche&nbsp;: <b>crème brûlée</b> 🌃</p>';
    const res = await call(p, 'mailer', { to: 'zoë@example.com', subject, text, html });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ provider: 'default', monthlyUsage: 1, monthlyLimit: MONTHLY });
    expect(res.body.id).toMatch(/^\d+$/);
    expect(await mailUsage(env, p.id)).toBe(1);

    const [mail] = await outbox(p);
    expect(mail).toMatchObject({ to: ['zoë@example.com'], subject, text, html, lastEvent: 'delivered' });
    const [log] = await apiLogs(p);
    expect(log).toMatchObject({ subject, status: 'delivered' });
    expect([log!.to].flat()).toEqual(['zoë@example.com']);
  });

  it('renders a template with its variables, several recipients at once', async () => {
    const res = await call(p, 'mailer', { to: ['ann@example.com', 'bo@example.com'], templateName: 'welcome', variables: { name: 'Ånn <b>', projectName: 'Café ☕', appUrl: 'https://app.example.com' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.templateUsed).toMatchObject({ key: 'welcome', scope: 'global' });
    // (the test's clock stands still: the outbox's order among equal times is not the sending order)
    const mail = (await outbox(p)).find((m) => m.to.includes('ann@example.com'));
    expect(mail!.to).toEqual(['ann@example.com', 'bo@example.com']);
    expect(mail!.subject).toContain('Café ☕');
    expect(mail!.html).toContain('Ånn &lt;b&gt;'); // escaped in html, as the API renders it
  });

  it("answers the mail API's own codes to the function, which the client receives as thrown", async () => {
    const before = await mailUsage(env, p.id);
    const noSubject = await call(p, 'mailer', { to: 'a@example.com', text: 'hi' });
    expect(noSubject).toMatchObject({ status: 400, body: { success: false, code: 'mail_subject_required' } });
    const badTo = await call(p, 'mailer', { to: 'not an address', subject: 's', text: 't' });
    expect(badTo).toMatchObject({ status: 400, body: { code: 'mail_invalid_recipient' } });
    const noTo = await call(p, 'mailer', { subject: 's', text: 't' });
    expect(noTo).toMatchObject({ status: 400, body: { code: 'validation_failed', message: "Field 'to' is required." } });
    const badVars = await call(p, 'mailer', { to: 'a@example.com', templateName: 'welcome', variables: 'x' });
    expect(badVars).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    const noTemplate = await call(p, 'mailer', { to: 'a@example.com', templateName: 'no-such-template' });
    expect(noTemplate).toMatchObject({ status: 400, body: { code: 'mail_template_not_found' } });
    expect(await mailUsage(env, p.id)).toBe(before);
  });

  it('replays a send with the same idempotency key (the key space of POST /api/mail/send)', async () => {
    await deploy(p, 'keyed', `export default async (req, plinth) => {
      const first = await plinth.mail.send({ to: 'once@example.com', subject: 'Once', text: 'only once' }, { idempotencyKey: req.body.key });
      const again = await plinth.mail.send({ to: 'once@example.com', subject: 'Once', text: 'only once' }, { idempotencyKey: req.body.key });
      let other = null;
      try { await plinth.mail.send({ to: 'once@example.com', subject: 'Other', text: 'x' }, { idempotencyKey: req.body.key }); } catch (e) { other = e.code; }
      return { same: first.id === again.id, other };
    }`);
    const res = await call(p, 'keyed', { key: 'post-42-subscriber-7' });
    expect(res.body).toEqual({ same: true, other: 'idempotency_key_reused' });
    // a client retrying with the same key and message gets the first answer, and nothing is queued again
    const retry = await send(env, p, { to: 'once@example.com', subject: 'Once', text: 'only once' }, { ...p.sk, 'idempotency-key': 'post-42-subscriber-7' });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect((await outbox(p)).filter((m) => m.subject === 'Once')).toHaveLength(1);
    expect((await call(p, 'keyed', { key: 'bad\nkey' })).body).toMatchObject({ code: 'idempotency_key_invalid' });
  });
});

describe('the monthly quota', () => {
  it('a full quota reaches the function as mail_quota_exceeded; the client gets the answer it chose', async () => {
    const q = await makeProject(env.ctx);
    await deploy(q, 'mailer', MAILER);
    await deploy(q, 'invite', `export default async (req, plinth) => {
      try {
        const sent = await plinth.mail.send({ to: req.body.email, subject: 'Votre invitation ✉️', text: 'Bienvenue !' });
        return { invited: true, id: sent.id };
      } catch (err) {
        if (err instanceof PlinthError && err.code === 'mail_quota_exceeded') {
          return plinth.response({ invited: false, reason: 'Invitations are paused until next month.', code: err.code, status: err.status }, { status: 503 });
        }
        throw err;
      }
    }`);
    const fill = await Promise.all(Array.from({ length: MONTHLY }, (_, i) => send(env, q, { to: `u${i}@example.com`, subject: 'fill', text: 'x' })));
    expect(fill.map((r) => r.statusCode)).toEqual(Array(MONTHLY).fill(200));

    const chosen = await call(q, 'invite', { email: 'new@example.com' });
    expect(chosen).toEqual({ status: 503, body: { invited: false, reason: 'Invitations are paused until next month.', code: 'mail_quota_exceeded', status: 429 } });
    // uncaught, the client gets the mail API's code and status
    const uncaught = await call(q, 'mailer', { to: 'new@example.com', subject: 's', text: 't' });
    expect(uncaught).toMatchObject({ status: 429, body: { success: false, code: 'mail_quota_exceeded', message: 'Monthly mail limit exceeded.' } });
    expect(await lastInvocation(q)).toMatchObject({ ok: false, error_code: 'mail_quota_exceeded' });
    expect(await mailUsage(env, q.id)).toBe(MONTHLY);
    expect((await logsOf(env, q.id)).filter((l) => l.subject !== 'fill')).toHaveLength(0);
  });
});

describe('the project a function sends as', () => {
  it('is its own, whatever the function passes; another project sees nothing and pays nothing', async () => {
    const mine = await makeProject(env.ctx);
    const theirs = await makeProject(env.ctx);
    await deploy(mine, 'spoof', `export default async (req, plinth) => plinth.mail.send({
      to: 'victim@example.com', subject: 'From the other project', text: 'spoofed?',
      projectId: req.body.projectId, project: req.body.projectId, from: 'ceo@theirs.example', provider: 'byok',
    });`);
    const res = await call(mine, 'spoof', { projectId: theirs.id });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [mail] = await outbox(mine);
    expect(mail).toMatchObject({ to: ['victim@example.com'], subject: 'From the other project' });
    expect((mail as { from?: string }).from).not.toContain('theirs.example');
    expect(await outbox(theirs)).toEqual([]);
    expect(await apiLogs(theirs)).toEqual([]);
    expect(await mailUsage(env, theirs.id)).toBe(0);
    expect(await mailUsage(env, mine.id)).toBe(1);
    // the other project's key reaches only its own functions: this one is not there
    const other = await call(theirs, 'spoof', { projectId: mine.id });
    expect(other).toMatchObject({ status: 404, body: { code: 'function_not_found' } });
  });
});

describe('the per-invocation mail limit', () => {
  it(`stops an HTTP invocation's send past its ${PER_CALL} with function_mail_limit`, async () => {
    const r = await makeProject(env.ctx);
    await deploy(r, 'flood', `export default async (req, plinth) => {
      let sent = 0;
      try {
        for (let i = 0; i < 100; i++) { await plinth.mail.send({ to: 'n' + i + '@example.com', subject: 'n° ' + i, text: '·' }); sent++; }
      } catch (err) {
        if (req.body.rethrow) throw err;
        return { sent, code: err.code, status: err.status };
      }
      return { sent };
    }`);
    const caught = await call(r, 'flood', {});
    expect(caught).toEqual({ status: 200, body: { sent: PER_CALL, code: 'function_mail_limit', status: 429 } });
    expect(await outbox(r)).toHaveLength(PER_CALL);
    expect(await mailUsage(env, r.id)).toBe(PER_CALL);

    // the limit is per invocation: the next one may send again, and uncaught the client sees the code
    const second = await call(r, 'flood', { rethrow: true });
    expect(second).toMatchObject({ status: 429, body: { success: false, code: 'function_mail_limit' } });
    expect(await lastInvocation(r)).toMatchObject({ ok: false, error_code: 'function_mail_limit' });
    expect(await mailUsage(env, r.id)).toBe(2 * PER_CALL);
  });
});

describe('from an after-hook, retried', () => {
  it('mails once with the event id as idempotency key, though its first attempt failed after sending', async () => {
    const a = await makeProject(env.ctx);
    await createCollection(env, a, 'orders', [{ key: 'email', type: 'String' }, { key: 'total', type: 'Number' }]);
    await createCollection(env, a, 'attempts', [{ key: 'event', type: 'String' }]);
    await deploy(a, 'receipt', `export default async (event, plinth) => {
      const order = event.document;
      await plinth.mail.send({ to: order.email, subject: 'Votre reçu n° ' + order.total + ' €', text: 'Merci ! 🙏' }, { idempotencyKey: event.id });
      const seen = plinth.data.service.collection('attempts');
      if ((await seen.count({ event: event.id })) === 0) {
        await seen.create({ event: event.id });
        throw new Error('the first attempt fails after sending');
      }
    }`, 'after', { collection: 'orders', events: ['create'] });
    const order = await env.app.inject({ method: 'POST', url: '/api/data/orders', headers: a.sk, payload: { email: 'client@example.com', total: 42 } });
    expect(order.statusCode).toBe(201);
    for (let round = 0; round < 4; round++) {
      while ((await dispatchBatch(env.ctx)) > 0);
      await sql`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE locked_at IS NULL`.execute(env.ctx.db.admin);
      await drainJobs(env);
    }
    await env.ctx.functions.log.flush();
    const { rows } = await sql<{ ok: boolean }>`SELECT ok FROM function_invocations WHERE project_id = ${a.id} AND trigger = 'after.create' ORDER BY id`.execute(env.ctx.db.admin);
    expect(rows.map((r) => r.ok)).toEqual([false, true]);
    const mails = await outbox(a);
    expect(mails.map((m) => [m.to, m.subject, m.text])).toEqual([[['client@example.com'], 'Votre reçu n° 42 €', 'Merci ! 🙏']]);
    expect(await mailUsage(env, a.id)).toBe(1);
  });
});
