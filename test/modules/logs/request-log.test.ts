/**
 * The per-project request log (docs/dashboard.md "Request log"), against a real PostgreSQL:
 * a failing public-API request shows up through the dashboard route with its status, routed
 * route and error code; keys, ids and query strings never reach the log; another project's
 * operator reads nothing of it (404, and the table's policy hides the rows in any tenant scope
 * but the project's); the filters and pages; the node buffer is bounded (drops and counts,
 * never grows); the trim job bounds the table by age and rows per project.
 */
import { sql } from 'kysely';
import { parseCrontab } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestLog } from '../../../src/modules/logs/buffer.js';
import { trimRequestLog } from '../../../src/modules/logs/cleanup.js';
import { buildTaskList, CRONTAB } from '../../../src/worker/tasks.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let other: TestProject;
let A: ReturnType<typeof api>;

interface Row {
  id: string;
  at: string;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  code: string | null;
  userId: string | null;
}

async function log(project: TestProject, query = '', auth = project.owner.auth) {
  const res = await env.app.inject({ method: 'GET', url: `/api/projects/${project.id}/logs/requests${query}`, headers: auth });
  return { status: res.statusCode, body: res.json(), raw: res.body };
}

async function rows(project: TestProject, query = ''): Promise<Row[]> {
  const r = await log(project, query);
  expect(r.status, r.raw).toBe(200);
  return r.body.data.items as Row[];
}

beforeAll(async () => {
  env = await createTestEnv({ REQUEST_LOG_MAX_ROWS: '100', REQUEST_LOG_RETENTION_HOURS: '1' });
  A = api(env);
  p = await makeProject(env.ctx);
  other = await makeProject(env.ctx, await makeOperator(env.ctx));
  await createCollection(env, p, 'posts', [{ key: 'title', type: 'String', required: true }]);
}, 60_000);
afterAll(() => env?.close());

describe('request log', () => {
  it('a failing request appears with its routed route, status and error code, through the dashboard route', async () => {
    // The test clock stands still unless moved: each request a second after the one before.
    const invalid = await A.post('/api/data/posts', p.sk, { body: 'no title' });
    expect(invalid.status).toBe(400);
    env.clock.advance(1000);
    const missing = await A.get('/api/data/posts/64b7f0c2a1b2c3d4e5f60718', p.sk);
    expect(missing.status).toBe(404);
    env.clock.advance(1000);
    const listed = await A.get('/api/data/posts', p.sk);
    expect(listed.status).toBe(200);

    const items = await rows(p);
    expect(items.slice(0, 3).map((r) => [r.method, r.route, r.status, r.code])).toEqual([
      ['GET', '/api/data/:collectionName', 200, null],
      ['GET', '/api/data/:collectionName/:id', 404, missing.body.code],
      ['POST', '/api/data/:collectionName', 400, invalid.body.code],
    ]);
    expect(missing.body.code).toBe('document_not_found');
    expect(invalid.body.code).toMatch(/^[a-z_]+$/);
    for (const r of items.slice(0, 3)) {
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(r.at)).toBeLessThanOrEqual(env.clock.now().getTime());
      expect(r.userId).toBeNull();
    }
  });

  it('keys, ids, query strings and bodies never reach the log', async () => {
    const secretWord = 'sup3r-s3cret-value';
    // A publishable key in the query string (the SDK's ?key=), a document id in the path,
    // a query with a value, a body with a value.
    const res = await env.app.inject({ method: 'GET', url: `/api/data/posts/64b7f0c2a1b2c3d4e5f60719?key=${p.publishableKey}&title=${secretWord}` });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    await A.post('/api/data/posts', p.sk, { title: 42, note: secretWord });
    const r = await log(p, '?limit=200');
    expect(r.status).toBe(200);
    for (const needle of [p.publishableKey, p.secretKey, secretWord, '64b7f0c2a1b2c3d4e5f60719', '?', 'key=']) expect(r.raw).not.toContain(needle);
    // And in the table itself, whatever the dashboard shows.
    const { rows: stored } = await sql<{ t: string }>`SELECT string_agg(r::text, ' ') AS t FROM request_logs r`.execute(env.ctx.db.admin);
    for (const needle of [p.publishableKey, p.secretKey, secretWord, '64b7f0c2a1b2c3d4e5f60719']) expect(stored[0]!.t).not.toContain(needle);
  });

  it('names the end user whose token the request carried', async () => {
    const userId = '64b7f0c2a1b2c3d4e5f6071a';
    const token = await makeUserToken(env.ctx, p, userId);
    env.clock.advance(1000);
    const res = await A.get('/api/userAuth/me', { ...p.pk, authorization: `Bearer ${token}` });
    const [row] = await rows(p, `?route=${encodeURIComponent('/api/userAuth/me')}`);
    expect(row).toMatchObject({ route: '/api/userAuth/me', status: res.status, userId });
  });

  it("another project's operator cannot read it, and the table's policy hides it from other tenant scopes", async () => {
    const denied = await log(p, '', other.owner.auth);
    expect(denied.status).toBe(404);
    expect(denied.raw).not.toContain('/api/data/');
    expect(await rows(other)).toEqual([]);
    const routes = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/logs/requests/routes`, headers: other.owner.auth });
    expect(routes.statusCode).toBe(404);
    // Row-level security: in another project's scope, p's rows do not exist.
    const seen = await env.ctx.db.read({ projectId: other.id, keyKind: 'operator' }, (db) =>
      db.selectFrom('request_logs').select('id').where('project_id', '=', p.id).execute(),
    );
    expect(seen).toEqual([]);
    const own = await env.ctx.db.read({ projectId: p.id, keyKind: 'operator' }, (db) => db.selectFrom('request_logs').select('id').execute());
    expect(own.length).toBeGreaterThan(0);
  });

  it('keeps only API-key requests: dashboard calls and requests without a valid key are not logged', async () => {
    const before = (await rows(p, '?limit=200')).length;
    await A.get(`/api/projects/${p.id}/collections`, p.owner.auth);
    await A.get('/api/data/posts', { 'x-api-key': 'pk_live_not-a-key' });
    await A.get('/api/data/posts', {});
    const after = await rows(p, '?limit=200');
    expect(after.length).toBe(before);
    expect(after.some((r) => r.route.startsWith('/api/projects'))).toBe(false);
  });

  it("keeps not the console's realtime ticket calls, though that route is served with the public API", async () => {
    const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name: 'live', realtime: true, schema: [{ key: 'title', type: 'String' }] } });
    expect(res.statusCode, res.body).toBe(201);
    const before = (await rows(p, '?limit=200')).length;
    const ticket = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/realtime/ticket`, headers: p.owner.auth, payload: { subscriptions: [{ collection: 'live' }] } });
    expect(ticket.statusCode, ticket.body).toBe(200);
    // A refused one (unknown collection) is not kept either.
    await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/realtime/ticket`, headers: p.owner.auth, payload: { subscriptions: [{ collection: 'nope' }] } });
    const after = await rows(p, '?limit=200');
    expect(after.filter((r) => r.route.includes('realtime'))).toEqual([]);
    expect(after.length).toBe(before);
    // The app's own ticket, asked with the API key, is app traffic and is kept.
    const app = await A.post('/api/realtime/ticket', p.pk, { subscriptions: [{ collection: 'live' }] });
    expect(app.status).toBe(200);
    expect((await rows(p, `?route=${encodeURIComponent('/api/realtime/ticket')}`)).length).toBe(1);
  });

  it('filters by status class, route and code, and pages with a cursor', async () => {
    const errors = await rows(p, '?status=errors&limit=200');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((r) => r.status >= 400)).toBe(true);
    expect((await rows(p, '?status=5xx')).length).toBe(0);
    expect((await rows(p, '?status=ok&limit=200')).every((r) => r.status < 400)).toBe(true);
    expect((await rows(p, '?status=404&limit=200')).every((r) => r.status === 404)).toBe(true);
    const byRoute = await rows(p, `?route=${encodeURIComponent('/api/data/:collectionName/:id')}&limit=200`);
    expect(byRoute.length).toBeGreaterThan(0);
    expect(byRoute.every((r) => r.route === '/api/data/:collectionName/:id')).toBe(true);
    expect((await rows(p, '?code=document_not_found&limit=200')).every((r) => r.code === 'document_not_found')).toBe(true);

    const all = await rows(p, '?limit=200');
    const first = await log(p, '?limit=2');
    expect(first.body.data.items.map((r: Row) => r.id)).toEqual(all.slice(0, 2).map((r) => r.id));
    const second = await rows(p, `?limit=2&cursor=${first.body.data.nextCursor}`);
    expect(second.map((r) => r.id)).toEqual(all.slice(2, 4).map((r) => r.id));

    const routes = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/logs/requests/routes`, headers: p.owner.auth });
    const byName = new Map((routes.json().data as Array<{ route: string; requests: number; errors: number }>).map((r) => [r.route, r]));
    expect(byName.get('/api/data/:collectionName/:id')!.errors).toBe(byRoute.filter((r) => r.status >= 400).length);

    expect((await log(p, '?status=teapot')).status).toBe(400);
    expect((await log(p, '?cursor=drop%20table')).status).toBe(400);
  });

  it('pages neither skip nor repeat requests that arrived within the same millisecond', async () => {
    // A request's time is its start: now minus its duration, a fraction of a millisecond apart
    // from its neighbours'. The cursor carries milliseconds; a row stored 0.7 ms past the
    // cursor's row but older than it used to fall between two pages.
    const q = await makeProject(env.ctx, p.owner);
    const t = env.clock.now().getTime() - 10_000;
    for (const offset of [0.1, 0.3, 0.3, 0.45, 0.6, 0.9, 1.2, 1.7, 1.7, 2.05, 2.5, 3]) {
      env.ctx.requestLog.record(q.id, t + offset, 'GET', '/api/data/:collectionName', 200, 1.5, null, null);
    }
    const all = await rows(q, '?limit=200');
    expect(all).toHaveLength(12);
    for (const limit of [1, 2, 5]) {
      const seen: string[] = [];
      let cursor: string | null = '';
      while (cursor !== null) {
        const page = await log(q, `?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        seen.push(...page.body.data.items.map((r: Row) => r.id));
        cursor = page.body.data.nextCursor;
      }
      expect(seen, `limit ${limit}`).toEqual(all.map((r) => r.id));
    }
    // Stored in whole milliseconds, and the table refuses anything finer (migrations/066).
    const stored = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM request_logs WHERE project_id = ${q.id} AND at <> date_trunc('milliseconds', at)`.execute(env.ctx.db.admin);
    expect(stored.rows[0]!.n).toBe(0);
    await expect(
      sql`INSERT INTO request_logs (project_id, at, method, route, status, duration_ms) VALUES (${q.id}, ${new Date(t).toISOString().replace('Z', '700Z')}::timestamptz, 'GET', '/x', 200, 1)`.execute(env.ctx.db.admin),
    ).rejects.toThrow(/request_logs_at_whole_ms/);
  });

  it('the node buffer is bounded: beyond it rows are dropped and counted, never held; a write takes the rest', async () => {
    const small = new RequestLog({ db: env.ctx.db.admin, log: env.ctx.log, flushMs: 60_000, bufferRows: 100, batchRows: 1000 });
    const at = env.clock.now().getTime();
    for (let i = 0; i < 150; i++) small.record(other.id, at + i, 'GET', '/api/data/:collectionName', 200, 1, null, null);
    expect(small.pending).toBe(100);
    expect(small.stats.dropped).toBe(50);
    await small.flush();
    expect(small.pending).toBe(0);
    expect(small.stats.written).toBe(100);
    expect((await rows(other, '?limit=200')).length).toBe(100);
    await small.close();
    small.record(other.id, at, 'GET', '/x', 200, 1, null, null);
    expect(small.pending).toBe(0);
  });

  it('a batch that cannot be written is dropped and counted; the request never sees it', async () => {
    const broken = new RequestLog({ db: env.ctx.db.admin, log: env.ctx.log, flushMs: 60_000, bufferRows: 100 });
    broken.record('not-an-object-id', env.clock.now().getTime(), 'GET', '/api/data/:collectionName', 200, 1, null, null);
    await broken.flush();
    expect(broken.stats).toEqual({ dropped: 1, written: 0 });
  });

  it('the trim job keeps the newest rows per project and nothing older than the retention', async () => {
    const writer = new RequestLog({ db: env.ctx.db.admin, log: env.ctx.log, flushMs: 60_000, bufferRows: 1000 });
    const now = env.clock.now().getTime();
    for (let i = 0; i < 30; i++) writer.record(other.id, now + 1000 + i, 'POST', '/api/data/:collectionName', 201, 2, null, null);
    for (let i = 0; i < 5; i++) writer.record(p.id, now - 2 * 3600_000 + i, 'GET', '/api/old', 200, 1, null, null);
    await writer.flush();
    expect((await rows(other, '?limit=200')).length).toBe(130);
    const removed = await trimRequestLog(env.ctx);
    expect(removed).toEqual({ expired: 5, overCap: 30 });
    // The crontab runs it for the cluster.
    expect(parseCrontab(CRONTAB).map((i) => i.task)).toContain('logs:trim_requests');
    await buildTaskList(env.ctx)['logs:trim_requests']!({}, {} as never);
    const kept = await rows(other, '?limit=200');
    expect(kept.length).toBe(100);
    // The newest 100: the 30 later ones are all there.
    expect(kept.filter((r) => r.method === 'POST').length).toBe(30);
    expect((await rows(p, `?route=${encodeURIComponent('/api/old')}`)).length).toBe(0);
  });

  it("a deleted project's log goes with it", async () => {
    const gone = await makeProject(env.ctx);
    await A.get('/api/data/nothing', gone.sk);
    await env.ctx.requestLog.flush();
    const count = async () =>
      Number((await sql<{ n: string }>`SELECT count(*) AS n FROM request_logs WHERE project_id = ${gone.id}`.execute(env.ctx.db.admin)).rows[0]!.n);
    expect(await count()).toBe(1);
    const res = await env.app.inject({ method: 'DELETE', url: `/api/projects/${gone.id}`, headers: gone.owner.auth });
    expect(res.statusCode, res.body).toBe(200);
    expect(await count()).toBe(0);
  });
});
