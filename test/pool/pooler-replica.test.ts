/**
 * Plinth past one database server, on the real programs: Debian's PostgreSQL 15 as a primary
 * and a hot standby made with pg_basebackup (streaming), Debian's PgBouncer in
 * `pool_mode = transaction` in front of the primary with 10 server connections, and two API
 * node processes (request queries through PgBouncer, sessions direct, lag-tolerant reads on the
 * standby). Skipped with a message where pgbouncer or PostgreSQL 15 is not installed (CI
 * installs both, and sets PLINTH_REQUIRE_POOL_RIG=1 so a missing one fails instead).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot, type Booted } from '../../src/boot.js';
import { loadConfig } from '../../src/config.js';
import { makeCollection, makeProject, type TestProject } from '../helpers/fixtures.js';
import { deployFunction } from '../../src/modules/functions/service.js';
import { objectId } from '../../src/lib/ids.js';
import { signAccessToken } from '../../src/modules/auth/tokens.js';
import { call, describeFailure, freePort, spawnNode, until, waitApiReady, type Node } from '../cluster/processes.js';
import { poolRigSkipReason, startServers, type Servers } from './servers.js';

if (poolRigSkipReason && process.env.PLINTH_REQUIRE_POOL_RIG === '1') throw new Error(poolRigSkipReason);
if (poolRigSkipReason) console.warn(poolRigSkipReason);

const TEST_TIMEOUT = 120_000;
const SECRETS = { ENCRYPTION_KEY: 'ab'.repeat(32), DASHBOARD_JWT_SECRET: 'cd'.repeat(32), METRICS_TOKEN: 'pool-rig-metrics-token-0123456789' };
const METRICS = { authorization: `Bearer ${SECRETS.METRICS_TOKEN}` };

let servers: Servers;
let fixtures: Booted;
let dataDir: string;
let a: Node;
let b: Node;
/** A node that trusts a lagging standby (no after-write window, a lag bound far away): only the commit position header keeps a read on the primary. */
let c: Node;
const projects: TestProject[] = [];

async function onStandby<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: servers.standby.url() });
  await c.connect();
  try {
    return (await c.query<T>(text)).rows;
  } finally {
    await c.end();
  }
}

describe.skipIf(poolRigSkipReason !== null)('PgBouncer (transaction mode) and a streaming replica', () => {
  beforeAll(async () => {
    servers = await startServers({ serverConnections: 10 });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-pool-nodes-'));
    const env = {
      NODE_ENV: 'test',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'warn',
      PLINTH_DATA_DIR: dataDir,
      DATABASE_URL: servers.pgbouncer.url(),
      DATABASE_DIRECT_URL: servers.primary.url(),
      DATABASE_READ_URL: servers.standby.url(),
      DATABASE_READ_MAX_LAG_MS: '2000',
      DATABASE_READ_AFTER_WRITE_MS: '3000',
      // 200 clients on two nodes of 20 connections each, on a loaded machine: callers queue for a while.
      DB_CONNECT_TIMEOUT_MS: '20000',
      PLINTH_RUN_WORKER: 'false',
      DASHBOARD: 'false',
      TRUST_PROXY: 'true',
      RATE_LIMIT_SCALE: '1000',
      ...SECRETS,
    };
    // Fixtures from an in-process context on the primary (it also migrates).
    const sink = new Writable({ write: (_c, _e, cb) => cb() });
    fixtures = await boot(loadConfig({ ...env, DATABASE_URL: servers.primary.url(), DATABASE_DIRECT_URL: '', DATABASE_READ_URL: '' }), { logStream: sink });
    for (let i = 0; i < 20; i++) {
      const p = await makeProject(fixtures.ctx);
      await makeCollection(fixtures.ctx, p.id, 'notes', [{ key: 'title', type: 'String' }]);
      projects.push(p);
    }
    [a, b] = [spawnNode('api-a', 'api', env, await freePort()), spawnNode('api-b', 'api', env, await freePort())];
    c = spawnNode('api-c', 'api', { ...env, DATABASE_READ_MAX_LAG_MS: '3600000', DATABASE_READ_AFTER_WRITE_MS: '0' }, await freePort());
    await Promise.all([waitApiReady(a), waitApiReady(b), waitApiReady(c)]);
    // The standby has replayed the fixtures before the nodes' reads go to it.
    await until('the standby to replay the fixtures', async () => (await onStandby<{ n: number }>('SELECT count(*)::int AS n FROM collections'))[0]!.n >= 20);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a?.kill(), b?.kill(), c?.kill()]);
    await fixtures?.close();
    await servers?.stopAll();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('200 concurrent clients of 20 projects through 10 server connections: no request ever sees another project\'s rows', async () => {
    // Each project writes one marker note; then everyone reads their own project's list at once.
    const marked = await Promise.all(
      projects.map(async (p, i) => {
        const res = await call(i % 2 ? a : b, 'POST', '/api/data/notes', { headers: p.sk, body: { title: `project-${p.id}` } });
        expect(res.status, res.body).toBe(201);
        return p;
      }),
    );
    // Past the after-write window: the reads below run on the standby, under the same policies.
    await new Promise((r) => setTimeout(r, 3500));
    const replicaReads = async (node: Node) =>
      Number(/plinth_db_lag_tolerant_reads_total\{served_by="replica"\} (\d+)/.exec((await call(node, 'GET', '/metrics', { headers: METRICS })).body)?.[1] ?? 0);
    const before = [await replicaReads(a), await replicaReads(b)];
    const seen: string[] = [];
    await Promise.all(
      Array.from({ length: 200 }, async (_, c) => {
        const p = marked[c % 20]!;
        for (let k = 0; k < 5; k++) {
          const node = (c + k) % 2 ? a : b;
          const headers = { ...(k % 2 ? p.pk : p.sk), 'x-forwarded-for': `198.51.100.${c % 250}` };
          const list = await call(node, 'GET', '/api/data/notes?limit=100', { headers, timeoutMs: 60_000 });
          expect(list.status, list.body).toBe(200);
          for (const doc of list.json().data.items as Array<{ title: string }>) if (doc.title !== `project-${p.id}`) seen.push(`${p.id} saw ${doc.title}`);
          expect(list.json().data.items).toHaveLength(1);
        }
      }),
    );
    expect(seen).toEqual([]);
    // The isolation above held on the replica path: most of those 1000 reads ran on the standby.
    expect((await replicaReads(a)) - before[0]! + (await replicaReads(b)) - before[1]!).toBeGreaterThan(500);
    // The pooler really multiplexed: it never held more than 10 server connections.
    const admin = new pg.Client({ connectionString: servers.pgbouncer.url('pgbouncer') });
    await admin.connect();
    const { rows } = await admin.query<{ database: string }>('SHOW SERVERS');
    await admin.end();
    expect(rows.filter((r) => r.database === 'plinth').length).toBeLessThanOrEqual(10);
  }, TEST_TIMEOUT);

  it('access rules on the token\'s claims through the pooler: 120 concurrent clients of three kinds, no claim ever reaches another client\'s statement', async () => {
    const p = await makeProject(fixtures.ctx);
    const owner = { ...p.owner.auth };
    const made = await call(a, 'POST', `/api/projects/${p.id}/collections`, { headers: owner, body: { name: 'board', schema: [{ key: 'team', type: 'String' }] } });
    expect(made.status, made.body).toBe(201);
    const rules = await call(a, 'PATCH', `/api/projects/${p.id}/collections/board/rules`, { headers: owner, body: { list: 'team = @auth.claims.team' } });
    expect(rules.status, rules.body).toBe(200);
    for (const team of ['blue', 'blue', 'red', 'red', 'red']) expect((await call(b, 'POST', '/api/data/board', { headers: p.sk, body: { team } })).status).toBe(201);
    const record = (await fixtures.ctx.projects.byId(p.id))!;
    const kinds = [
      { team: 'blue', sees: 2 },
      { team: 'red', sees: 3 },
      { team: null, sees: 0 },
    ];
    const wrong: string[] = [];
    await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const kind = kinds[i % 3]!;
        const token = await signAccessToken(record, objectId(), 900, new Date(), undefined, kind.team ? { team: kind.team } : null);
        for (let k = 0; k < 3; k++) {
          const node = (i + k) % 2 ? a : b;
          const list = await call(node, 'GET', '/api/data/board?limit=100', { headers: { ...p.pk, authorization: `Bearer ${token}`, 'x-forwarded-for': `198.51.100.${i % 250}` }, timeoutMs: 60_000 });
          expect(list.status, list.body).toBe(200);
          const teams = (list.json().data.items as Array<{ team: string }>).map((d) => d.team);
          if (teams.length !== kind.sees || teams.some((t) => t !== kind.team)) wrong.push(`${kind.team ?? 'no claims'} saw ${teams.join(',')}`);
        }
      }),
    );
    expect(wrong).toEqual([]);
  }, TEST_TIMEOUT);

  it('a write on node A is read on node B while the standby replays nothing (pg_wal_replay_pause), with and without the commit position header', async () => {
    const p = projects[0]!;
    // Reads go to the standby when nothing was written lately (the metrics count them).
    await new Promise((r) => setTimeout(r, 3500)); // past the after-write window of the first test
    const before = await call(b, 'GET', '/api/data/notes', { headers: p.pk });
    expect(before.status).toBe(200);
    const metrics = await call(b, 'GET', '/metrics', { headers: METRICS });
    expect(metrics.body).toMatch(/plinth_db_lag_tolerant_reads_total\{served_by="replica"\} [1-9]/);
    expect(metrics.body).toMatch(/plinth_db_replica_lag_seconds\{replica="127\.0\.0\.1:\d+"\}/);

    await onStandby('SELECT pg_wal_replay_pause()');
    try {
      // The published SDK: no header. The project's after-write window reaches node B via the bus.
      const made = await call(a, 'POST', '/api/data/notes', { headers: p.sk, body: { title: 'while paused' } });
      expect(made.status, made.body).toBe(201);
      const position = made.headers.get('plinth-commit-position');
      expect(position).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      const id = made.json()._id as string;
      const got = await call(b, 'GET', `/api/data/notes/${id}`, { headers: p.pk });
      expect(got.status, got.body).toBe(200);
      expect((await call(b, 'GET', '/api/data/notes?limit=100', { headers: p.pk })).json().data.items.map((d: { _id: string }) => d._id)).toContain(id);
      // The standby has not replayed it: it really is the primary serving.
      expect(await onStandby(`SELECT 1 FROM documents WHERE id = '${id}'`)).toEqual([]);

      // After the window, a client sending the header still reads its write (the standby is behind the position).
      await new Promise((r) => setTimeout(r, 3500));
      const withHeader = await call(b, 'GET', `/api/data/notes/${id}`, { headers: { ...p.pk, 'plinth-commit-position': position! } });
      expect(withHeader.status, withHeader.body).toBe(200);
      // On a node that would read the paused standby (no window, no lag bound), the header alone
      // keeps the get and the list on the primary; without it the standby answers, without the note.
      const header = { ...p.pk, 'plinth-commit-position': position! };
      expect((await call(c, 'GET', `/api/data/notes/${id}`, { headers: header })).status).toBe(200);
      expect((await call(c, 'GET', '/api/data/notes?limit=100', { headers: header })).json().data.items.map((d: { _id: string }) => d._id)).toContain(id);
      expect((await call(c, 'GET', `/api/data/notes/${id}`, { headers: p.pk })).status).toBe(404);
    } finally {
      await onStandby('SELECT pg_wal_replay_resume()');
    }
  }, TEST_TIMEOUT);

  it("functions follow the same read rules: a function reads its own write on a node without an after-write window, and a client's commit position reaches its reads", async () => {
    const p = projects[3]!;
    await deployFunction(fixtures.ctx, p.id, {
      name: 'write-read',
      kind: 'http',
      source: `export default async (req, plinth) => { const notes = plinth.data.collection('notes'); const made = await notes.create({ title: req.body.title }); const again = await notes.get(made._id); return { id: made._id, title: again.title }; }`,
    });
    await deployFunction(fixtures.ctx, p.id, { name: 'read', kind: 'http', source: `export default (req, plinth) => plinth.data.collection('notes').get(req.query.id)` });
    await new Promise((r) => setTimeout(r, 3500)); // past the after-write windows of the tests before
    await onStandby('SELECT pg_wal_replay_pause()');
    try {
      // Node C has no after-write window: only the position of the function's own write keeps its read on the primary.
      const made = await call(c, 'POST', '/api/functions/write-read', { headers: p.sk, body: { title: 'é — 日本語' } });
      expect(made.status, made.body).toBe(200);
      expect(made.json()).toMatchObject({ title: 'é — 日本語' });
      const id = made.json().id as string;
      expect(await onStandby(`SELECT 1 FROM documents WHERE id = '${id}'`)).toEqual([]);
      const position = made.headers.get('plinth-commit-position');
      expect(position).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      // A client that sends the position gets a function that reads at least that far; without it, the function reads the paused standby, as the data API does there.
      const withHeader = await call(c, 'GET', `/api/functions/read?id=${id}`, { headers: { ...p.pk, 'plinth-commit-position': position! } });
      expect(withHeader.status, withHeader.body).toBe(200);
      expect(withHeader.json()).toMatchObject({ _id: id, title: 'é — 日本語' });
      expect((await call(c, 'GET', `/api/functions/read?id=${id}`, { headers: p.pk })).status).toBe(404);
    } finally {
      await onStandby('SELECT pg_wal_replay_resume()');
    }
  }, TEST_TIMEOUT);

  it('reads fall back to the primary without an error while the standby is down, and return to it when it is back', async () => {
    const p = projects[1]!;
    const replicaReads = async () => Number(/plinth_db_lag_tolerant_reads_total\{served_by="replica"\} (\d+)/.exec((await call(a, 'GET', '/metrics', { headers: METRICS })).body)?.[1] ?? 0);
    await servers.standby.stop();
    for (let i = 0; i < 10; i++) expect((await call(a, 'GET', '/api/data/notes', { headers: p.sk })).status).toBe(200);
    // Marked down by the first read that tried it, or (when the standby lagged past the bound
    // under load, so no read tried it) by the next lag poll; every read meanwhile answered 200.
    await until('the standby to be marked down', async () => {
      expect((await call(a, 'GET', '/api/data/notes', { headers: p.sk })).status).toBe(200);
      return /plinth_db_replica_up\{replica="127\.0\.0\.1:\d+"\} 0/.test((await call(a, 'GET', '/metrics', { headers: METRICS })).body);
    }, 30_000, 250);
    await servers.standby.start();
    const base = await replicaReads();
    await until('reads to reach the standby again', async () => {
      expect((await call(a, 'GET', '/api/data/notes', { headers: p.sk })).status).toBe(200);
      return (await replicaReads()) > base;
    }, 30_000, 250);
  }, TEST_TIMEOUT);

  it('a PgBouncer restart answers 503 with Retry-After, and the nodes recover by themselves', async () => {
    const p = projects[2]!;
    await servers.pgbouncer.stop();
    // Writes go through the pooler (reads may still reach the standby).
    const during = await call(a, 'POST', '/api/data/notes', { headers: p.sk, body: { title: 'during' } });
    expect(during.status, during.body).toBe(503);
    expect(during.headers.get('retry-after')).toMatch(/^\d+$/);
    await servers.pgbouncer.start();
    for (const node of [a, b]) {
      await until(`${node.name} to write through the pooler again`, async () => {
        if (!node.alive()) throw new Error(describeFailure(node));
        return (await call(node, 'POST', '/api/data/notes', { headers: p.sk, body: { title: 'after' } })).status === 201;
      }, 30_000, 250);
    }
  }, TEST_TIMEOUT);
});
