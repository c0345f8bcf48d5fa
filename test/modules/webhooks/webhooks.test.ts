/**
 * Outbound webhooks against a real PostgreSQL and a fake receiver on 127.0.0.1: endpoints and
 * their secret (shown once, encrypted at rest), a change delivered with a Standard Webhooks
 * signature that the library's verifier accepts, filters by action and collection, retries on
 * the schedule (Retry-After honoured, redirects are failures, the first 1 KB of answers kept),
 * 410 Gone and days of failure disabling the endpoint (with an email to its operator), test
 * send and redelivery with the same webhook-id, exactly one delivery per change and endpoint
 * whatever the number of dispatchers, and the SSRF guard in production mode.
 */
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { JobHelpers } from 'graphile-worker';
import { dispatchBatch, dispatchTask, startDispatcher } from '../../../src/modules/webhooks/dispatcher.js';
import { attemptDelivery } from '../../../src/modules/webhooks/delivery.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestProject } from '../../helpers/fixtures.js';
import { drainJobs } from '../../helpers/jobs.js';
import { api } from '../data/helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
let rx: Receiver;

const hooks = (path = '') => `/api/projects/${p.id}/webhooks${path}`;
const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers = p.owner.auth) => {
  const res = await env.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { status: res.statusCode, body: res.body ? res.json() : undefined };
};

async function endpoint(body: Record<string, unknown> = {}) {
  const r = await call('POST', hooks(), { url: `${rx.url}/hook`, ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data as { endpoint: { _id: string }; secret: string };
}

async function deliveries(endpointId: string) {
  const r = await call('GET', hooks(`/${endpointId}/deliveries?limit=100`));
  expect(r.status).toBe(200);
  return r.body.data as Array<{ _id: string; status: string; attempts: number; nextAttemptAt: string | null; eventType: string; log: Array<{ at: string; statusCode: number | null; response: string | null; error: string | null }> }>;
}

/** Changes the dispatcher has not passed yet. */
async function undispatched(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM changes c, webhook_cursor w WHERE (c.xid, c.id) > (w.xid, w.id)`.execute(env.ctx.db.admin);
  return rows[0]!.n;
}

/**
 * Dispatches every change so far, then runs the due delivery jobs. A change becomes readable
 * once every older transaction on the server has finished (other test files' included), so
 * this waits for that rather than assume it.
 */
async function dispatchAll() {
  for (let i = 0; i < 200; i++) {
    while ((await dispatchBatch(env.ctx)) > 0);
    if ((await undispatched()) === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the change stream did not catch up in 10 s');
}

async function flush() {
  await dispatchAll();
  await drainJobs(env);
}

beforeAll(async () => {
  env = await createTestEnv({ WEBHOOK_TIMEOUT_MS: '500' });
  p = await makeProject(env.ctx);
  A = api(env);
  rx = await startReceiver();
  for (const name of ['posts', 'comments']) {
    const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name, schema: [{ key: 'title', type: 'String' }] } });
    expect(res.statusCode).toBe(201);
  }
});
afterAll(async () => {
  await rx.close();
  await env.close();
});
beforeEach(async () => {
  // retries are scheduled on the app's clock and run on the database's: keep them together, so a
  // slow machine never makes a retry due at once
  env.clock.set(new Date());
  await flush(); // nothing left over from the previous test
  rx.received.length = 0;
  rx.answer = () => ({ status: 200, body: 'ok' });
  await sql`DELETE FROM webhook_endpoints`.execute(env.ctx.db.admin);
});

describe('endpoints', () => {
  it('shows the whsec_ secret once, keeps it encrypted, and never returns it again', async () => {
    const { endpoint: e, secret } = await endpoint();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    const list = await call('GET', hooks());
    const one = await call('GET', hooks(`/${e._id}`));
    expect(JSON.stringify(list.body)).not.toContain(secret.slice(6));
    expect(JSON.stringify(one.body)).not.toContain(secret.slice(6));
    const { rows } = await sql<{ secret: unknown }>`SELECT secret FROM webhook_endpoints WHERE id = ${e._id}`.execute(env.ctx.db.admin);
    expect(JSON.stringify(rows[0]!.secret)).not.toContain(secret.slice(6));
  });

  it('refuses a 21st endpoint per project (403)', async () => {
    for (let i = 0; i < 20; i++) await endpoint();
    const r = await call('POST', hooks(), { url: `${rx.url}/hook` });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('webhook_endpoints_limit');
  });

  it("is the project owner's only: another operator gets 404 or 403", async () => {
    const { endpoint: e } = await endpoint();
    const other = await makeOperator(env.ctx);
    const r = await call('GET', hooks(`/${e._id}`), undefined, other.auth);
    expect([403, 404]).toContain(r.status);
  });

  it('makes a collection write its changes while an endpoint listens, and stop when none does', async () => {
    const { endpoint: e } = await endpoint({ collections: ['posts'] });
    const trigger = async () => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_trigger WHERE tgname LIKE 'dr_%'`.execute(env.ctx.db.admin)).rows[0]!.n;
    expect(await trigger()).toBe(1);
    expect((await call('DELETE', hooks(`/${e._id}`))).status).toBe(200);
    expect(await trigger()).toBe(0);
  });
});

describe('delivery', () => {
  it('POSTs a change signed by the Standard Webhooks scheme; the library verifies it', async () => {
    const { endpoint: e, secret } = await endpoint();
    const created = await A.post('/api/data/posts', p.sk, { title: 'signed' });
    expect(created.status).toBe(201);
    await flush();
    expect(rx.received).toHaveLength(1);
    const got = rx.received[0]!;
    const verified = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string; data: { collection: string; document: { title: string } } };
    expect(verified.type).toBe('document.create');
    expect(verified.data.collection).toBe('posts');
    expect(verified.data.document.title).toBe('signed');
    const [d] = await deliveries(e._id);
    expect(got.headers['webhook-id']).toBe(d!._id);
    expect(d!.status).toBe('succeeded');
    // a tampered body or another secret fails verification
    expect(() => new Webhook(secret).verify(got.body.replace('signed', 'forged'), got.headers as Record<string, string>)).toThrow();
  });

  it('sends only the actions and collections the endpoint asked for', async () => {
    await endpoint({ events: ['delete'], collections: ['comments'] });
    const post = await A.post('/api/data/posts', p.sk, { title: 'p' });
    const comment = await A.post('/api/data/comments', p.sk, { title: 'c' });
    await A.del(`/api/data/posts/${post.body._id ?? post.body.data._id}`, p.sk);
    await A.del(`/api/data/comments/${comment.body._id ?? comment.body.data._id}`, p.sk);
    await flush();
    expect(rx.received.map((r) => JSON.parse(r.body).type)).toEqual(['document.delete']);
    expect(JSON.parse(rx.received[0]!.body).data.collection).toBe('comments');
  });

  it('creates exactly one delivery per change and endpoint, however many dispatchers run', async () => {
    const { endpoint: e } = await endpoint();
    await A.post('/api/data/posts/bulk', p.sk, Array.from({ length: 30 }, (_, i) => ({ title: `d${i}` })));
    await Promise.all([dispatchBatch(env.ctx), dispatchBatch(env.ctx), dispatchBatch(env.ctx)]);
    await dispatchAll();
    expect(await deliveries(e._id)).toHaveLength(30);
  });
});

describe('the dispatcher', () => {
  it('keeps dispatching new changes until stopped', async () => {
    const { endpoint: e } = await endpoint();
    const dispatcher = startDispatcher(env.ctx);
    try {
      await A.post('/api/data/posts', p.sk, { title: 'picked up by the loop' });
      for (let i = 0; i < 100 && (await deliveries(e._id)).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      await A.post('/api/data/posts', p.sk, { title: 'and the next one' });
      for (let i = 0; i < 100 && (await deliveries(e._id)).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await dispatcher.stop();
    }
    await drainJobs(env);
    expect(rx.received.map((r) => JSON.parse(r.body).data.document.title).sort()).toEqual(['and the next one', 'picked up by the loop']);
  });

  it('runs its crontab job as a short drain that returns, never holding a worker slot for the minute', async () => {
    const { endpoint: e } = await endpoint();
    await A.post('/api/data/posts', p.sk, { title: 'drained by the job' });
    const started = Date.now();
    for (let i = 0; i < 100 && (await deliveries(e._id)).length === 0; i++) {
      await dispatchTask(env.ctx)({}, { abortSignal: new AbortController().signal } as unknown as JobHelpers);
      if ((await deliveries(e._id)).length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await deliveries(e._id)).toHaveLength(1);
  });
});

describe('failures', () => {
  it('retries on the schedule, keeps the first 1 KB of each answer, and succeeds later', async () => {
    const { endpoint: e } = await endpoint();
    rx.answer = () => ({ status: 500, body: 'x'.repeat(5000) });
    await A.post('/api/data/posts', p.sk, { title: 'retry me' });
    await flush();
    let [d] = await deliveries(e._id);
    expect(d!.status).toBe('pending');
    expect(d!.attempts).toBe(1);
    // measured from the attempt itself (both on the server's clock), not from now
    const wait = new Date(d!.nextAttemptAt!).getTime() - new Date(d!.log[0]!.at).getTime();
    expect(wait).toBeGreaterThanOrEqual(4000); // 5 s ± 20 %
    expect(wait).toBeLessThanOrEqual(6000);
    expect(d!.log[0]!.statusCode).toBe(500);
    expect(d!.log[0]!.response).toHaveLength(1024);
    rx.answer = () => ({ status: 204 });
    expect(await attemptDelivery(env.ctx, d!._id)).toBe('succeeded');
    [d] = await deliveries(e._id);
    expect(d!.status).toBe('succeeded');
    expect(d!.log.map((a) => a.statusCode)).toEqual([500, 204]);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(1); // the same id on every attempt
  });

  it('treats a redirect as a failure and never follows it', async () => {
    const { endpoint: e } = await endpoint();
    rx.answer = (r) => (r.path === '/hook' ? { status: 302, headers: { location: `${rx.url}/elsewhere` } } : { status: 200 });
    await A.post('/api/data/posts', p.sk, { title: 'redirected' });
    await flush();
    const [d] = await deliveries(e._id);
    expect(d!.status).toBe('pending');
    expect(d!.log[0]!.statusCode).toBe(302);
    expect(rx.received.map((r) => r.path)).toEqual(['/hook']);
  });

  it('honours Retry-After when it asks for more than the schedule', async () => {
    const { endpoint: e } = await endpoint();
    rx.answer = () => ({ status: 503, headers: { 'retry-after': '3600' } });
    await A.post('/api/data/posts', p.sk, { title: 'later' });
    await flush();
    const [d] = await deliveries(e._id);
    expect(new Date(d!.nextAttemptAt!).getTime() - new Date(d!.log[0]!.at).getTime()).toBeGreaterThanOrEqual(3600_000);
  });

  it('logs a timeout as a failed attempt without an answer', async () => {
    const { endpoint: e } = await endpoint();
    rx.answer = () => 'hang';
    await A.post('/api/data/posts', p.sk, { title: 'slow' });
    await flush();
    const [d] = await deliveries(e._id);
    expect(d!.log[0]!.statusCode).toBeNull();
    expect(d!.log[0]!.error).toMatch(/no answer within 500 ms/);
  });

  it('disables the endpoint on 410 Gone and sends it nothing more', async () => {
    const { endpoint: e } = await endpoint();
    rx.answer = () => ({ status: 410 });
    await A.post('/api/data/posts', p.sk, { title: 'gone' });
    await flush();
    const one = await call('GET', hooks(`/${e._id}`));
    expect(one.body.data.enabled).toBe(false);
    expect(one.body.data.disabledReason).toMatch(/410/);
    rx.received.length = 0;
    await A.post('/api/data/posts', p.sk, { title: 'after' });
    await flush();
    expect(rx.received).toHaveLength(0);
  });

  it('disables an endpoint failing for days and emails its operator', async () => {
    const { endpoint: e } = await endpoint();
    await sql`UPDATE webhook_endpoints SET failing_since = now() - interval '6 days' WHERE id = ${e._id}`.execute(env.ctx.db.admin);
    rx.answer = () => ({ status: 500 });
    await A.post('/api/data/posts', p.sk, { title: 'still failing' });
    await flush();
    const one = await call('GET', hooks(`/${e._id}`));
    expect(one.body.data.enabled).toBe(false);
    const mails = await sql<{ to: string }>`SELECT "to" FROM mail_logs WHERE tag = 'webhooks.disabled'`.execute(env.ctx.db.admin);
    expect(mails.rows.map((m) => m.to)).toContain(p.owner.email);
    // enabling it again clears the failure
    const on = await call('PATCH', hooks(`/${e._id}`), { enabled: true });
    expect(on.body.data).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
  });
});

describe('test send and redelivery', () => {
  it('sends a webhook.test event now and shows the attempt', async () => {
    const { endpoint: e, secret } = await endpoint();
    const r = await call('POST', hooks(`/${e._id}/test`));
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ eventType: 'webhook.test', status: 'succeeded', outcome: 'succeeded' });
    const got = rx.received[0]!;
    expect((new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string }).type).toBe('webhook.test');
  });

  it('redelivers a delivered event with the same webhook-id', async () => {
    const { endpoint: e } = await endpoint();
    await A.post('/api/data/posts', p.sk, { title: 'again' });
    await flush();
    const [d] = await deliveries(e._id);
    const r = await call('POST', hooks(`/${e._id}/deliveries/${d!._id}/redeliver`));
    expect(r.status).toBe(202);
    await drainJobs(env);
    expect(rx.received.map((x) => x.headers['webhook-id'])).toEqual([d!._id, d!._id]);
    expect((await deliveries(e._id))[0]!.log).toHaveLength(2);
  });
});

describe('SSRF guard in production mode', () => {
  it('refuses loopback, private and plain-http URLs, and will not send to one stored before', async () => {
    const prod = await createTestEnv({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    try {
      const q = await makeProject(prod.ctx);
      for (const url of [`${rx.url}/hook`, 'https://127.0.0.1/hook', 'https://localhost/x', 'https://169.254.169.254/latest', 'https://10.0.0.8/', 'https://[::1]/']) {
        const r = await prod.app.inject({ method: 'POST', url: `/api/projects/${q.id}/webhooks`, headers: q.owner.auth, payload: { url } });
        expect(r.statusCode, url).toBe(400);
        expect(r.json().code ?? r.json().error?.code).toBe('webhook_url_invalid');
      }
      const ok = await prod.app.inject({ method: 'POST', url: `/api/projects/${q.id}/webhooks`, headers: q.owner.auth, payload: { url: 'https://hooks.example.com/in' } });
      expect(ok.statusCode).toBe(201);
      // an endpoint whose URL points inside (stored before the guard, or by hand): nothing is sent
      const id = ok.json().data.endpoint._id as string;
      await sql`UPDATE webhook_endpoints SET url = ${`${rx.url}/hook`} WHERE id = ${id}`.execute(prod.ctx.db.admin);
      const t = await prod.app.inject({ method: 'POST', url: `/api/projects/${q.id}/webhooks/${id}/test`, headers: q.owner.auth });
      expect(t.json().data.log[0].error).toMatch(/not a public https URL/);
      expect(rx.received).toHaveLength(0);
    } finally {
      await prod.close();
    }
  });
});
