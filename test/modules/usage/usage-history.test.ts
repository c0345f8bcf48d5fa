/**
 * Usage over time (docs/dashboard.md "Usage history"), against a real PostgreSQL: app requests
 * are counted into their UTC hour by route group and status class and read back through the
 * dashboard route; two nodes' counts add up (and their realtime peaks); the sample job writes
 * bytes and mail; the trim job removes hours past the retention; the range and metric
 * validation; another operator reads nothing.
 */
import { sql } from 'kysely';
import { parseCrontab } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot } from '../../../src/boot.js';
import { buildApp, type App } from '../../../src/server.js';
import { signOperatorToken } from '../../../src/modules/operators/tokens.js';
import { addCounts } from '../../../src/modules/usage/queries.js';
import { sampleUsage, trimUsage } from '../../../src/modules/usage/sample.js';
import { buildTaskList, CRONTAB } from '../../../src/worker/tasks.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import { makeOperator, makeProject, makeUserToken, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from '../data/helpers.js';

const HOUR = 3600_000;
let env: TestEnv;
let p: TestProject;
let other: TestProject;
let A: ReturnType<typeof api>;

interface History {
  from: string;
  to: string;
  hours: string[];
  series: Record<string, Array<number | null>>;
  limits: Record<string, number>;
}

/** A token signed at the test clock's now (the clock moves hours in this file). */
async function authOf(op: TestOperator) {
  return { authorization: `Bearer ${await signOperatorToken(env.config.dashboardJwtSecret, op.id, env.clock.now())}` };
}

async function history(project: TestProject, query: string, op = project.owner, app: App = env.app) {
  const res = await app.inject({ method: 'GET', url: `/api/projects/${project.id}/usage/history${query}`, headers: await authOf(op) });
  return { status: res.statusCode, body: res.json() as { data: History; code?: string }, raw: res.body };
}

const at = (h: History, metric: string, hour: Date) => h.series[metric]![h.hours.indexOf(hour.toISOString())];

beforeAll(async () => {
  env = await createTestEnv();
  A = api(env);
  p = await makeProject(env.ctx);
  other = await makeProject(env.ctx, await makeOperator(env.ctx));
  await createCollection(env, p, 'posts', [{ key: 'title', type: 'String', required: true }]);
}, 60_000);
afterAll(() => env?.close());

describe('usage history', () => {
  it('samples mail sent (from the mail log) and the stored bytes into the current hour', async () => {
    const res = await env.app.inject({ method: 'POST', url: '/api/mail/send', headers: p.sk, payload: { to: 'a@example.com', subject: 'Hi', text: 'x' } });
    expect(res.statusCode, res.body).toBe(200);
    await drainJobs(env); // the outbox: sent → delivered
    // The counters the quotas guard (what the console's "this month" shows too).
    for (const [metric, used] of [['storage_bytes', 12345], ['db_bytes', 67890]] as const) {
      await env.ctx.db.admin
        .insertInto('usage_counters')
        .values({ subject_id: p.id, metric, period: '', used })
        .onConflict((oc) => oc.columns(['subject_id', 'metric', 'period']).doUpdateSet({ used }))
        .execute();
    }
    await sampleUsage(env.ctx);
    const hour = new Date(Math.floor(env.clock.now().getTime() / HOUR) * HOUR);
    const h = (await history(p, '?metrics=mail,file,data')).body.data;
    expect(Object.keys(h.series).sort()).toEqual(['data.bytes', 'file.bytes', 'mail.bounced', 'mail.sent', 'mail.sent.month']);
    expect(at(h, 'mail.sent', hour)).toBe(1);
    expect(at(h, 'mail.bounced', hour)).toBe(0);
    // The month's running total, what the monthly limit is drawn against.
    expect(at(h, 'mail.sent.month', hour)).toBe(1);
    expect(at(h, 'file.bytes', hour)).toBe(12345);
    expect(at(h, 'data.bytes', hour)).toBe(67890);
    // A gauge's hour without a sample is null (not sampled), not 0.
    expect(at(h, 'file.bytes', new Date(hour.getTime() - HOUR))).toBeNull();
    // Sampling again replaces the hour's value, it does not add.
    await sampleUsage(env.ctx);
    expect(at((await history(p, '?metrics=mail.sent')).body.data, 'mail.sent', hour)).toBe(1);
  });

  it('counts app requests into their UTC hour by route group and status class', async () => {
    // Thirty seconds before the turn of an hour.
    const turn = Math.ceil((env.clock.now().getTime() + 60_000) / HOUR) * HOUR;
    env.clock.set(new Date(turn - 30_000));
    const before = new Date(turn - HOUR);
    const after = new Date(turn);
    expect((await A.get('/api/data/posts', p.sk)).status).toBe(200);
    expect((await A.get('/api/data/posts', p.pk)).status).toBe(200);
    expect((await A.get('/api/data/posts/64b7f0c2a1b2c3d4e5f60718', p.sk)).status).toBe(404);
    const token = await makeUserToken(env.ctx, p, '64b7f0c2a1b2c3d4e5f6071a');
    const me = await A.get('/api/userAuth/me', { ...p.pk, authorization: `Bearer ${token}` });
    // Dashboard requests are not app traffic: not counted.
    await history(p, '');
    env.clock.advance(60_000); // the next hour
    expect((await A.get('/api/data/posts', p.sk)).status).toBe(200);

    const r = await history(p, `?from=${before.toISOString()}&to=${new Date(turn + HOUR).toISOString()}&metrics=requests`);
    expect(r.status, r.raw).toBe(200);
    const h = r.body.data;
    expect(h.hours).toEqual([before.toISOString(), after.toISOString()]);
    expect(h.series['requests.apiKey.2xx']).toEqual([2, 1]);
    expect(h.series['requests.apiKey.4xx']).toEqual([1, 0]);
    expect(h.series['requests.apiKey.5xx']).toEqual([0, 0]);
    const endUser = me.status >= 500 ? '5xx' : me.status >= 400 ? '4xx' : '2xx';
    expect(me.status).toBeLessThan(500);
    expect(h.series[`requests.endUser.${endUser}`]).toEqual([1, 0]);
    expect(Object.keys(h.series)).toHaveLength(9);
    // As stored: one row per metric and hour, at the hour's start.
    const { rows } = await sql<{ hour: Date; value: string }>`
      SELECT hour, value FROM usage_hourly WHERE project_id = ${p.id} AND metric = 'requests.apiKey.2xx' ORDER BY hour`.execute(env.ctx.db.admin);
    expect(rows.map((x) => [new Date(x.hour).toISOString(), Number(x.value)])).toEqual([
      [before.toISOString(), 2],
      [after.toISOString(), 1],
    ]);
    // The other project saw none of it.
    const o = (await history(other, `?from=${before.toISOString()}&metrics=requests`)).body.data;
    expect(o.series['requests.apiKey.2xx']!.every((v) => v === 0)).toBe(true);
  });

  it("two nodes' counts add up in the same hour, and their realtime peaks are summed", async () => {
    const second = await boot(env.config, { clock: env.clock, skipMigrations: true });
    const app2 = await buildApp(second.ctx);
    try {
      const hour = new Date(Math.floor(env.clock.now().getTime() / HOUR) * HOUR);
      const q = `?from=${hour.toISOString()}&metrics=requests.apiKey.2xx,realtime`;
      const start = at((await history(p, q)).body.data, 'requests.apiKey.2xx', hour)!;
      for (let i = 0; i < 3; i++) expect((await app2.inject({ method: 'GET', url: '/api/data/posts', headers: p.sk })).statusCode).toBe(200);
      for (let i = 0; i < 2; i++) expect((await A.get('/api/data/posts', p.sk)).status).toBe(200);
      // Realtime: node 1 saw 3 streams at once, node 2 saw 2; a later lower count keeps the peak.
      env.ctx.usage.peak(p.id, 3);
      second.ctx.usage.peak(p.id, 2);
      await second.ctx.usage.flush();
      second.ctx.usage.peak(p.id, 1);
      await second.ctx.usage.flush();
      // Read through node 2 (which flushes its own counts, not node 1's): node 1 still holds 2.
      const partial = (await history(p, q, p.owner, app2)).body.data;
      expect(at(partial, 'requests.apiKey.2xx', hour)).toBe(start + 3);
      const h = (await history(p, q)).body.data; // node 1 flushes its own, then reads
      expect(at(h, 'requests.apiKey.2xx', hour)).toBe(start + 5);
      expect(at(h, 'realtime.peak', hour)).toBe(5);
    } finally {
      await app2.close();
      await second.close();
    }
  });

  it('a failed write keeps the counts for the next one', async () => {
    const hour = new Date(Math.floor(env.clock.now().getTime() / HOUR) * HOUR);
    const q = `?from=${hour.toISOString()}&metrics=functions`;
    const start = at((await history(p, q)).body.data, 'functions.invocations', hour)!;
    env.ctx.usage.add(p.id, 'functions.invocations', 4);
    env.ctx.usage.add(p.id, 'functions.errors');
    await sql`ALTER TABLE usage_hourly RENAME TO usage_hourly_away`.execute(env.ctx.db.admin);
    try {
      await env.ctx.usage.flush();
      expect(env.ctx.usage.stats.failed).toBeGreaterThan(0);
    } finally {
      await sql`ALTER TABLE usage_hourly_away RENAME TO usage_hourly`.execute(env.ctx.db.admin);
    }
    const h = (await history(p, q)).body.data;
    expect(at(h, 'functions.invocations', hour)).toBe(start + 4);
    expect(at(h, 'functions.errors', hour)).toBeGreaterThanOrEqual(1);
  });

  it('validates the range and the metrics, and defaults to the last 7 days', async () => {
    const now = env.clock.now();
    const bad = async (query: string, code: string) => {
      const r = await history(p, query);
      expect(r.status, r.raw).toBe(400);
      expect(r.body.code).toBe(code);
    };
    await bad(`?from=${now.toISOString()}&to=${new Date(now.getTime() - HOUR).toISOString()}`, 'usage_range_invalid');
    await bad(`?from=${new Date(now.getTime() - 91 * 24 * HOUR).toISOString()}&to=${now.toISOString()}`, 'usage_range_invalid');
    await bad('?from=yesterday', 'usage_range_invalid');
    await bad('?metrics=requests,bitcoins', 'usage_metric_unknown');
    const ok90 = await history(p, `?from=${new Date(now.getTime() - 89 * 24 * HOUR).toISOString()}&to=${now.toISOString()}&metrics=ai.calls`);
    expect(ok90.status).toBe(200);
    expect(ok90.body.data.hours.length).toBeGreaterThan(89 * 24);
    const d = (await history(p, '')).body.data;
    expect(d.hours).toHaveLength(7 * 24);
    expect(Date.parse(d.to)).toBeGreaterThan(now.getTime());
    expect(Object.keys(d.series)).toEqual(expect.arrayContaining(['requests.apiKey.2xx', 'data.bytes', 'file.bytes', 'mail.sent', 'mail.bounced', 'realtime.peak', 'functions.invocations', 'functions.errors', 'ai.calls']));
    expect(d.limits).toEqual({ databaseBytes: 50 * 1024 * 1024, storageBytes: 20 * 1024 * 1024, mailPerMonth: expect.any(Number), aiSessionsPerMonth: 5 });
  });

  it("another operator's project is 404, and a bad id 400", async () => {
    const r = await history(p, '', other.owner);
    expect(r.status).toBe(404);
    expect(r.raw).not.toContain('requests.');
    const bad = await env.app.inject({ method: 'GET', url: '/api/projects/nope/usage/history', headers: await authOf(p.owner) });
    expect(bad.statusCode).toBe(400);
    const anon = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/usage/history` });
    expect(anon.statusCode).toBe(401);
  });

  it('the trim job removes hours older than USAGE_RETENTION_DAYS (90), keeps the rest', async () => {
    const now = env.clock.now().getTime();
    const h = (ms: number) => Math.floor(ms / HOUR);
    await addCounts(env.ctx.db.admin, {
      projectIds: [p.id, p.id],
      hours: [h(now - 91 * 24 * HOUR), h(now - 89 * 24 * HOUR)],
      metrics: ['ai.calls', 'ai.calls'],
      nodes: ['', ''],
      values: [7, 9],
    });
    expect(CRONTAB).toContain('usage:trim');
    expect(parseCrontab(CRONTAB).map((i) => i.task)).toEqual(expect.arrayContaining(['usage:trim', 'usage:sample', 'usage:check_alerts']));
    expect(Object.keys(buildTaskList(env.ctx))).toEqual(expect.arrayContaining(['usage:trim', 'usage:sample', 'usage:check_alerts', 'usage:alert_webhook']));
    expect(await trimUsage(env.ctx)).toBeGreaterThanOrEqual(1);
    const { rows } = await sql<{ value: string }>`SELECT value FROM usage_hourly WHERE project_id = ${p.id} AND metric = 'ai.calls' ORDER BY hour`.execute(env.ctx.db.admin);
    expect(rows.map((r) => Number(r.value))).toEqual([9]);
  });

  it("a deleted project's history goes with it", async () => {
    const q = await makeProject(env.ctx, p.owner, 'Doomed');
    expect((await A.get('/api/data/anything', q.sk)).status).toBeGreaterThanOrEqual(400);
    await env.ctx.usage.flush();
    const count = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM usage_hourly WHERE project_id = ${q.id}`.execute(env.ctx.db.admin)).rows[0]!.n);
    expect(await count()).toBeGreaterThan(0);
    const del = await env.app.inject({ method: 'DELETE', url: `/api/projects/${q.id}`, headers: await authOf(p.owner) });
    expect(del.statusCode, del.body).toBe(200);
    expect(await count()).toBe(0);
  });
});

