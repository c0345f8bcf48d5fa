/**
 * Usage alerts (docs/dashboard.md "Usage alerts"), against a real PostgreSQL and a fake webhook
 * receiver on 127.0.0.1: a plan limit passed at 80 % and at 100 % mails the owner once each,
 * whether two worker instances check at once or a worker restarts; the mail lands in the dev
 * outbox; an error rate over the operator's threshold posts a signed webhook that verifies with
 * the secret shown once, and again only after the cooldown; the settings API validates, is
 * audited without the secret, and refuses another operator.
 */
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot } from '../../../src/boot.js';
import { signOperatorToken } from '../../../src/modules/operators/tokens.js';
import { checkAlerts } from '../../../src/modules/usage/alerts.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

const MB = 1024 * 1024;
let env: TestEnv;
let p: TestProject;
let other: TestProject;
let receiver: Receiver;

async function authOf(op: TestOperator) {
  return { authorization: `Bearer ${await signOperatorToken(env.config.dashboardJwtSecret, op.id, env.clock.now())}` };
}

async function settings(method: 'GET' | 'PUT', project: TestProject, body?: unknown, op = project.owner) {
  const res = await env.app.inject({ method, url: `/api/projects/${project.id}/usage/alerts`, headers: await authOf(op), ...(body ? { payload: body as object } : {}) });
  return { status: res.statusCode, body: res.json(), raw: res.body };
}

async function setDbBytes(projectId: string, used: number) {
  await env.ctx.db.admin
    .insertInto('usage_counters')
    .values({ subject_id: projectId, metric: 'db_bytes', period: '', used })
    .onConflict((oc) => oc.columns(['subject_id', 'metric', 'period']).doUpdateSet({ used }))
    .execute();
}

/** The usage alert mails queued for an address, oldest first. */
async function alertMails(to: string) {
  return env.ctx.db.admin
    .selectFrom('mail_logs')
    .select(['id', 'subject', 'status', 'project_id'])
    .where('tag', '=', 'usage.alert')
    .where('to', '=', to)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

beforeAll(async () => {
  env = await createTestEnv();
  receiver = await startReceiver();
  p = await makeProject(env.ctx, undefined, 'Shop');
  other = await makeProject(env.ctx, await makeOperator(env.ctx));
}, 60_000);
afterAll(async () => {
  await env?.close();
  await receiver?.close();
});

describe('usage alerts', () => {
  it('a plan limit passed mails the owner once at 80 % and once at 100 %, across two workers and a restart', async () => {
    // The free plan's database: 50 MB.
    await setDbBytes(p.id, 41 * MB);
    const second = await boot(env.config, { clock: env.clock, skipMigrations: true });
    let sentTogether: Array<{ projectId: string; alert: string }>;
    try {
      // Two worker instances check at the same moment: one mail.
      const [a, b] = await Promise.all([checkAlerts(env.ctx), checkAlerts(second.ctx)]);
      sentTogether = [...a, ...b].filter((s) => s.projectId === p.id);
      expect(sentTogether).toEqual([{ projectId: p.id, alert: 'database_bytes:80' }]);
      expect(await checkAlerts(second.ctx)).toEqual([]);
    } finally {
      await second.close();
    }
    let mails = await alertMails(p.owner.email);
    expect(mails.map((m) => m.subject)).toEqual(["Shop: database size at 80 % of the plan's limit"]);
    expect(mails[0]!.project_id).toBeNull(); // a platform mail, no project's quota

    // Past the limit: the 100 % alert, once.
    await setDbBytes(p.id, 50 * MB);
    expect((await checkAlerts(env.ctx)).filter((s) => s.projectId === p.id)).toEqual([{ projectId: p.id, alert: 'database_bytes:100' }]);
    // A restarted worker (a new process: nothing in memory) sends nothing again.
    const restarted = await boot(env.config, { clock: env.clock, skipMigrations: true });
    try {
      expect((await checkAlerts(restarted.ctx)).filter((s) => s.projectId === p.id)).toEqual([]);
    } finally {
      await restarted.close();
    }
    mails = await alertMails(p.owner.email);
    expect(mails.map((m) => m.subject)).toEqual(["Shop: database size at 80 % of the plan's limit", 'Shop: database size limit reached']);

    // The mail goes through the platform mailer to the dev outbox.
    await drainJobs(env);
    const box = await env.ctx.db.admin.selectFrom('mail_outbox').select(['to', 'subject', 'text']).where('mail_log_id', '=', mails[1]!.id).executeTakeFirstOrThrow();
    expect(box.to).toEqual([p.owner.email]);
    expect(box.text).toContain(`Shop has used ${50 * MB} of ${50 * MB} (100 %) for database size on the free plan`);

    // The console lists what was sent.
    const view = await settings('GET', p);
    expect(view.status).toBe(200);
    expect(view.body.data.sent.map((s: { alert: string }) => s.alert).sort()).toEqual(['database_bytes:100', 'database_bytes:80']);
    expect(view.body.data.recipients).toEqual([p.owner.email]);
  });

  it('a jump past both thresholds sends the 100 % alert only; alerts switched off send nothing', async () => {
    const q = await makeProject(env.ctx, await makeOperator(env.ctx), 'Jumpy');
    await env.ctx.db.admin.insertInto('usage_counters').values({ subject_id: q.id, metric: 'storage_bytes', period: '', used: 25 * MB }).execute();
    const off = await makeProject(env.ctx, await makeOperator(env.ctx), 'Quiet');
    expect((await settings('PUT', off, { enabled: false })).status).toBe(200);
    await env.ctx.db.admin.insertInto('usage_counters').values({ subject_id: off.id, metric: 'storage_bytes', period: '', used: 25 * MB }).execute();
    const sent = await checkAlerts(env.ctx);
    expect(sent.filter((s) => s.projectId === q.id)).toEqual([{ projectId: q.id, alert: 'storage_bytes:100' }]);
    expect(sent.filter((s) => s.projectId === off.id)).toEqual([]);
    expect((await alertMails(q.owner.email)).map((m) => m.subject)).toEqual(['Jumpy: file storage limit reached']);
    expect(await alertMails(off.owner.email)).toEqual([]);
  });

  it('an error rate over the threshold posts a signed webhook, verifiable with the secret shown once; again only after the cooldown', async () => {
    const put = await settings('PUT', p, { errorRatePercent: 10, cooldownMinutes: 30, webhookUrl: `${receiver.url}/alerts` });
    expect(put.status, put.raw).toBe(200);
    const secret = put.body.data.webhookSecret as string;
    expect(secret).toMatch(/^whsec_/);
    expect(put.body.data).toMatchObject({ enabled: true, errorRatePercent: 10, p99Ms: null, cooldownMinutes: 30, webhookUrl: `${receiver.url}/alerts` });
    // The secret is shown once: not in GET, not in the audit log.
    const got = await settings('GET', p);
    expect(got.raw).not.toContain(secret);
    const audit = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/audit?action=usage.alerts_update`, headers: await authOf(p.owner) });
    expect(audit.statusCode).toBe(200);
    expect(audit.json().data.items[0]).toMatchObject({ action: 'usage.alerts_update', after: { errorRatePercent: 10, webhookUrl: `${receiver.url}/alerts` } });
    expect(audit.body).not.toContain(secret);

    // 30 requests in the last hour, 6 of them 5xx: 20 %.
    const fail = (n: number, status: number) => {
      for (let i = 0; i < n; i++) env.ctx.requestLog.record(p.id, env.clock.now().getTime() - 1000, 'GET', '/api/data/:collectionName', status, 12, status >= 500 ? 'internal_error' : null, null);
    };
    fail(24, 200);
    fail(6, 500);
    await env.ctx.requestLog.flush();
    expect((await checkAlerts(env.ctx)).filter((s) => s.projectId === p.id)).toEqual([{ projectId: p.id, alert: 'error_rate' }]);
    expect((await checkAlerts(env.ctx)).filter((s) => s.projectId === p.id)).toEqual([]); // within the cooldown
    await drainJobs(env);
    const posts = receiver.received.filter((r) => r.path === '/alerts');
    expect(posts).toHaveLength(1);
    const body = new Webhook(secret).verify(posts[0]!.body, posts[0]!.headers as Record<string, string>) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'usage.alert', projectId: p.id, projectName: 'Shop', alert: 'error_rate', percent: 20, threshold: 10, requests: 30, errors: 6 });
    // A forged body or another secret does not verify.
    expect(() => new Webhook(secret).verify(posts[0]!.body.replace('"Shop"', '"Evil"'), posts[0]!.headers as Record<string, string>)).toThrow();
    const otherSecret = (await settings('PUT', other, { webhookUrl: `${receiver.url}/other` })).body.data.webhookSecret as string;
    expect(() => new Webhook(otherSecret).verify(posts[0]!.body, posts[0]!.headers as Record<string, string>)).toThrow();
    // The owner got the mail too.
    expect((await alertMails(p.owner.email)).at(-1)!.subject).toBe('Shop: error rate 20 % in the last hour');

    // After the cooldown, with errors still in the last hour: once more.
    env.clock.advance(31 * 60_000);
    fail(24, 200);
    fail(6, 503);
    await env.ctx.requestLog.flush();
    expect((await checkAlerts(env.ctx)).filter((s) => s.projectId === p.id)).toEqual([{ projectId: p.id, alert: 'error_rate' }]);
    await drainJobs(env);
    expect(receiver.received.filter((r) => r.path === '/alerts')).toHaveLength(2);
  });

  it('p99 latency over the threshold alerts; too few requests do not', async () => {
    const q = await makeProject(env.ctx, await makeOperator(env.ctx), 'Slow');
    expect((await settings('PUT', q, { p99Ms: 500 })).status).toBe(200);
    const record = (n: number, ms: number) => {
      for (let i = 0; i < n; i++) env.ctx.requestLog.record(q.id, env.clock.now().getTime() - 1000, 'GET', '/api/data/:collectionName', 200, ms, null, null);
    };
    record(5, 2000);
    await env.ctx.requestLog.flush();
    expect((await checkAlerts(env.ctx)).filter((s) => s.projectId === q.id)).toEqual([]); // 5 requests: too few
    record(30, 20);
    await env.ctx.requestLog.flush();
    expect((await checkAlerts(env.ctx)).filter((s) => s.projectId === q.id)).toEqual([{ projectId: q.id, alert: 'p99_latency' }]);
    expect((await alertMails(q.owner.email)).map((m) => m.subject)).toEqual(['Slow: p99 latency 2000 ms in the last hour']);
  });

  it('validates the settings and refuses another operator', async () => {
    const bad = async (body: unknown, code: string) => {
      const r = await settings('PUT', p, body);
      expect(r.status, r.raw).toBe(400);
      expect(r.body.code).toBe(code);
    };
    await bad({ errorRatePercent: 150 }, 'validation_failed');
    await bad({ p99Ms: -5 }, 'validation_failed');
    await bad({ p99Ms: 'fast' }, 'validation_failed');
    await bad({ cooldownMinutes: 1 }, 'validation_failed');
    await bad({ webhookUrl: 'ftp://example.com/x' }, 'webhook_url_invalid');
    await bad({ surprise: true }, 'validation_failed');
    expect((await settings('GET', p, undefined, other.owner)).status).toBe(404);
    expect((await settings('PUT', p, { enabled: false }, other.owner)).status).toBe(404);
    expect((await settings('GET', p)).body.data.enabled).toBe(true);
    // Clearing the webhook drops its secret; setting it again makes a new one.
    const cleared = await settings('PUT', p, { webhookUrl: null });
    expect(cleared.body.data).toMatchObject({ webhookUrl: null, webhookSecret: null });
    const row = await env.ctx.db.admin.selectFrom('usage_alert_settings').select('webhook_secret').where('project_id', '=', p.id).executeTakeFirstOrThrow();
    expect(row.webhook_secret).toBeNull();
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM usage_alerts_sent WHERE project_id = ${p.id}`.execute(env.ctx.db.admin);
    expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(3);
  });
});
