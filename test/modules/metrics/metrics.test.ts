/**
 * GET /metrics (Prometheus text format): served only when an operator configured it (a token on
 * the API port, or a loopback-only port), never to a browser of another origin, with request
 * series under the routed pattern (bounded, no ids), pool and job-queue gauges, mail and
 * refusal counters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { startMetricsListener, type MetricsListener } from '../../../src/modules/metrics/listener.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import { makeCollection, makeProject, type TestProject } from '../../helpers/fixtures.js';

const TOKEN = 'metrics-token-0123456789abcdef';
let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  // MAIL_MONTHLY_LIMIT=0: every project send is a quota refusal (system mail is not charged).
  env = await createTestEnv({ METRICS_TOKEN: TOKEN, MAIL_MONTHLY_LIMIT: '0' });
  p = await makeProject(env.ctx);
  await makeCollection(env.ctx, p.id, 'posts', [{ key: 'title', type: 'String' }]);
});
afterAll(() => env.close());

const scrape = async (e: TestEnv = env) => {
  const res = await e.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.statusCode).toBe(200);
  return res.body;
};

/** The value of one sample, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('who may read /metrics', () => {
  it('refuses without the token, with a wrong one or another scheme (401, WWW-Authenticate)', async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, 'Bearer wrong', `Basic ${TOKEN}`, `Bearer ${TOKEN.slice(0, -1)}`]) {
      const res = await env.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      expect(res.statusCode, authorization).toBe(401);
      expect(res.json()).toMatchObject({ success: false, code: 'unauthorized' });
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.body).not.toContain('plinth_http_requests_total');
    }
  });

  it('serves the Prometheus text format with the token', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).toContain('# TYPE plinth_http_requests_total counter');
    expect(res.body).toContain('# TYPE process_cpu_user_seconds_total counter'); // prom-client's default metrics
    expect(res.body).toContain('nodejs_eventloop_lag_seconds');
  });

  it('grants no CORS to another origin, not even to a preflight', async () => {
    const origin = 'https://evil.example';
    const get = await env.app.inject({ method: 'GET', url: '/metrics', headers: { origin, authorization: `Bearer ${TOKEN}` } });
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
    const pre = await env.app.inject({
      method: 'OPTIONS',
      url: '/metrics',
      headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('does not exist when neither METRICS_TOKEN nor METRICS_PORT is set (404), and is not in the API docs', async () => {
    const off = await createTestEnv();
    try {
      const res = await off.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found' });
    } finally {
      await off.close();
    }
    const spec = await env.app.inject({ method: 'GET', url: '/docs/json' });
    if (spec.statusCode === 200) expect(Object.keys(spec.json().paths ?? {})).not.toContain('/metrics');
  });

  it('rejects a guessable METRICS_TOKEN and a bad METRICS_PORT at start-up', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', PLINTH_DATA_DIR: '/tmp/plinth-cfg-metrics', METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
    expect(() => loadConfig({ NODE_ENV: 'test', PLINTH_DATA_DIR: '/tmp/plinth-cfg-metrics', METRICS_PORT: '70000' })).toThrow(/METRICS_PORT/);
    const cfg = loadConfig({ NODE_ENV: 'test', PLINTH_DATA_DIR: '/tmp/plinth-cfg-metrics', METRICS_PORT: '9464' });
    expect(cfg.metrics).toEqual({ token: undefined, port: 9464 });
  });
});

describe('what /metrics reports', () => {
  it('counts requests under the routed pattern, never the raw URL or an id', async () => {
    const id = '0123456789abcdef01234567';
    expect((await env.app.inject({ method: 'GET', url: '/api/data/%70osts', headers: p.sk })).statusCode).toBe(200);
    expect((await env.app.inject({ method: 'GET', url: '/api/data/posts', headers: p.sk })).statusCode).toBe(200);
    expect((await env.app.inject({ method: 'GET', url: `/api/data/posts/${id}`, headers: p.sk })).statusCode).toBe(404);
    expect((await env.app.inject({ method: 'GET', url: `/no/such/${id}` })).statusCode).toBe(404);
    const text = await scrape();
    expect(sample(text, 'plinth_http_requests_total', { method: 'GET', route: '/api/data/:collectionName', status: '200' })).toBe(2);
    expect(sample(text, 'plinth_http_requests_total', { method: 'GET', route: '/api/data/:collectionName/:id', status: '404' })).toBe(1);
    expect(sample(text, 'plinth_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(sample(text, 'plinth_http_request_duration_seconds_count', { method: 'GET', route: '/api/data/:collectionName', status: '200' })).toBe(2);
    expect(text).not.toContain('%70osts');
    expect(text).not.toContain('route="/api/data/posts');
    expect(text).not.toContain(id);
    expect(text).not.toContain(p.id);
  });

  it('reports both pools: open, idle and waiting connections', async () => {
    const text = await scrape();
    for (const pool of ['tenant', 'admin']) {
      for (const state of ['total', 'idle', 'waiting']) expect(sample(text, 'plinth_db_pool_connections', { pool, state }), `${pool} ${state}`).toBeGreaterThanOrEqual(0);
    }
    expect(sample(text, 'plinth_db_pool_connections', { pool: 'tenant', state: 'total' })).toBeGreaterThan(0); // the data reads above
  });

  it('reports password hashes running and waiting for a turn', async () => {
    const text = await scrape();
    expect(text).toContain('# TYPE plinth_password_hashes gauge');
    for (const state of ['running', 'waiting']) expect(sample(text, 'plinth_password_hashes', { state }), state).toBe(0);
  });

  it('counts quota refusals by their error code', async () => {
    const before = sample(await scrape(), 'plinth_http_errors_total', { code: 'mail_quota_exceeded', status: '429' }) ?? 0;
    const res = await env.app.inject({ method: 'POST', url: '/api/mail/send', headers: p.sk, payload: { to: 'a@example.com', subject: 's', text: 't' } });
    expect(res.statusCode).toBe(429);
    expect(res.json().code).toBe('mail_quota_exceeded');
    expect(sample(await scrape(), 'plinth_http_errors_total', { code: 'mail_quota_exceeded', status: '429' })).toBe(before + 1);
  });

  it('counts a mail as sent when the worker hands it to the provider', async () => {
    const before = sample(await scrape(), 'plinth_mail_sent_total', { sender: 'outbox' }) ?? 0;
    await env.ctx.mailer.sendSystemMail({ projectId: p.id, to: 'user@example.com', subject: 'Code', text: '123456', tag: 'auth.verify-email' });
    expect(sample(await scrape(), 'plinth_mail_sent_total', { sender: 'outbox' }) ?? 0).toBe(before); // queued, not sent
    await drainJobs(env);
    expect(sample(await scrape(), 'plinth_mail_sent_total', { sender: 'outbox' })).toBe(before + 1);
  });
});

describe('METRICS_PORT: the loopback listener', () => {
  let quiet: TestEnv;
  let listener: MetricsListener;
  beforeAll(async () => {
    quiet = await createTestEnv();
    listener = await startMetricsListener(quiet.ctx, 0);
    // Before the first scrape: the queue gauges are read at most every 5 s.
    const hourAgo = new Date(Date.now() - 3600_000);
    await quiet.ctx.queue.add('mail.send', { logId: 'none' }, { runAt: hourAgo });
    await quiet.ctx.queue.add('mail.send', { logId: 'none' });
    await quiet.ctx.queue.add('mail.send', { logId: 'none' }, { runAt: new Date(Date.now() + 3600_000) }); // not due: not ready

  });
  afterAll(async () => {
    await listener.close();
    await quiet.close();
  });

  it('serves /metrics on 127.0.0.1 without a token, and nothing else', async () => {
    const res = await fetch(`http://127.0.0.1:${listener.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await res.text()).toContain('plinth_db_pool_connections');
    expect((await fetch(`http://127.0.0.1:${listener.port}/api/health`)).status).toBe(404);
  });

  it('reports the job queue depth and the age of the oldest ready job', async () => {
    const text = await (await fetch(`http://127.0.0.1:${listener.port}/metrics`)).text();
    expect(sample(text, 'plinth_jobs_ready')).toBe(2);
    expect(sample(text, 'plinth_jobs_locked')).toBe(0);
    expect(sample(text, 'plinth_jobs_oldest_ready_age_seconds')).toBeGreaterThanOrEqual(3599);
  });
});
