/**
 * An import is all or nothing up to its commit: a client that leaves, or an IMPORT_TIMEOUT that
 * passes, AFTER the whole archive was uploaded and read (while the import does its last
 * statements) must not leave a committed import behind. The import is held after the read by a
 * lock on its project's quota row (the reservation is among its last statements), so the client
 * can be cut, or the deadline passed, at exactly that point.
 */
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS } from '../../../src/lib/quota-queries.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';

let env: TestEnv;
let base: string;
const TIMEOUT_S = 2;
const T = '2026-01-01T00:00:00.000Z';
const line = (r: unknown) => `${JSON.stringify(r)}\n`;
const archive = gzipSync(
  line({ type: 'header', format: 'plinth-project-archive', version: 1, project: { id: 'a'.repeat(24), name: 'late' }, exportedAt: T }) +
  line({ type: 'collection', name: 'notes', fields: [], rls: { enabled: false, mode: 'public-read', ownerField: 'userId', requireAuthForWrite: true }, indexes: [], createdAt: T }) +
  line({ type: 'document', collection: 'notes', id: '6'.padStart(24, '0'), ownerId: null, data: { k: 'one' }, createdAt: T, updatedAt: T, deletedAt: null }) +
  line({ type: 'end', counts: { collections: 1, documents: 1, users: 0, files: 0 } }),
);

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100', IMPORT_TIMEOUT: `${TIMEOUT_S}s` });
  base = await env.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => env.close());

async function until(cond: () => Promise<boolean>, ms: number) {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Holds the project's database-bytes quota row in another transaction until released. */
async function holdQuotaRow(projectId: string) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const done = env.ctx.db.admin.transaction().execute(async (tx) => {
    await sql`INSERT INTO usage_counters (subject_id, metric, period, used) VALUES (${projectId}, ${METRICS.dbBytes}, '', 0)
      ON CONFLICT (subject_id, metric, period) DO UPDATE SET used = usage_counters.used`.execute(tx);
    locked();
    await released;
  });
  await isLocked;
  return async () => {
    release();
    await done;
  };
}

/** The import has read the whole archive: its transaction waits for the quota row. */
async function waitingForQuota(): Promise<boolean> {
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%plinth_reserve%'`.execute(env.ctx.db.admin);
  return Number(r.rows[0]!.n) > 0;
}

/** An import transaction holds its operator's advisory lock (queries.ts). */
async function importRunning(): Promise<boolean> {
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_locks
    WHERE locktype = 'advisory' AND classid = ${0x504c4e49}::oid AND objsubid = 2`.execute(env.ctx.db.admin);
  return Number(r.rows[0]!.n) > 0;
}

const kept = async (p: TestProject) => ({
  collections: (await env.ctx.db.admin.selectFrom('collections').select('id').where('project_id', '=', p.id).execute()).length,
  documents: (await env.ctx.db.admin.selectFrom('documents').select('id').where('project_id', '=', p.id).execute()).length,
});

describe('an import commits only while its client waits and its time lasts', () => {
  it('the client leaves after the whole archive was sent and read: the import rolls back, nothing kept', async () => {
    const p = await makeProject(env.ctx);
    const release = await holdQuotaRow(p.id);
    const req = http.request(`${base}/api/projects/${p.id}/import`, { method: 'POST', agent: false, headers: { ...p.owner.auth, 'content-type': 'application/gzip' } });
    req.on('error', () => {});
    req.end(archive);
    await until(waitingForQuota, 5000);
    req.destroy();
    // The server has seen the connection close (its answer's 'close': the import's signal).
    await until(async () => (await new Promise<number>((r) => env.app.server.getConnections((_e, n) => r(n)))) === 0, 3000);
    await release();
    await until(async () => !(await importRunning()), 5000);
    expect(await kept(p)).toEqual({ collections: 0, documents: 0 });
  });

  it('IMPORT_TIMEOUT passes after the archive was read: 408 import_timeout, nothing kept', { timeout: 20_000 }, async () => {
    const p = await makeProject(env.ctx);
    const release = await holdQuotaRow(p.id);
    const answer = env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/import`, headers: { ...p.owner.auth, 'content-type': 'application/gzip' }, payload: archive });
    await until(waitingForQuota, 5000);
    await new Promise((r) => setTimeout(r, TIMEOUT_S * 1000 + 300));
    await release();
    const res = await answer;
    expect(res.statusCode).toBe(408);
    expect(res.json()).toMatchObject({ success: false, code: 'import_timeout' });
    expect(await kept(p)).toEqual({ collections: 0, documents: 0 });
  });

  it('an import that finishes in time with its client waiting still commits', async () => {
    const p = await makeProject(env.ctx);
    const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/import`, headers: { ...p.owner.auth, 'content-type': 'application/gzip' }, payload: archive });
    expect(res.statusCode).toBe(200);
    expect(await kept(p)).toEqual({ collections: 1, documents: 1 });
  });
});
