/**
 * Threat: one project taking the shared tenant pool. 40 concurrent publishable-key reads of
 * project A with a catastrophic `_regex` (each burns up to its statement timeout) used to hold
 * every tenant connection, and project B's one-row read waited seconds for one. Each project
 * now holds at most PROJECT_DB_CONCURRENCY connections (the excess waits briefly, then 429
 * project_busy with Retry-After), and publishable-key statements have a tighter timeout:
 * B stays fast (a generous bound; normally a few ms) while A floods.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeProject, type TestProject } from '../helpers/fixtures.js';

let env: TestEnv;
let a: TestProject;
let b: TestProject;
let bDoc: string;

// PostgreSQL's regex engine spends about a second compiling this (nested bounded repeats).
const CATASTROPHIC = encodeURIComponent('(((.{1,40}){1,40}){1,40})[xy]');

beforeAll(async () => {
  // A small node: 4 slots per project (default 10 of the 20 tenant connections), so A's queries
  // leave this 2-core machine's CPUs some room too (the cap bounds a project's CPU share as well).
  env = await createTestEnv({ RATE_LIMIT_SCALE: '0', PROJECT_DB_CONCURRENCY: '4' });
  a = await makeProject(env.ctx);
  b = await makeProject(env.ctx);
  await makeCollection(env.ctx, a.id, 'notes');
  await makeCollection(env.ctx, b.id, 'notes');
  const rows = Array.from({ length: 20 }, (_, i) => ({ text: `${'a'.repeat(60)}${i}` }));
  expect((await env.app.inject({ method: 'POST', url: '/api/data/notes/bulk', headers: a.sk, payload: rows })).statusCode).toBe(201);
  const doc = await env.app.inject({ method: 'POST', url: '/api/data/notes', headers: b.sk, payload: { text: 'b' } });
  bDoc = doc.json()._id ?? doc.json().data._id;
});
afterAll(() => env.close());

async function timedRead(): Promise<{ ms: number; status: number }> {
  const t0 = performance.now();
  const res = await env.app.inject({ method: 'GET', url: `/api/data/notes/${bDoc}`, headers: b.pk });
  return { ms: performance.now() - t0, status: res.statusCode };
}

it("project B's one-row read stays fast while project A floods 40 catastrophic regex reads", async () => {
  // A server that has been serving: its tenant pool has connections open (opening one while
  // the database's CPUs are busy with A's queries can take a second by itself).
  const warm = await Promise.all(Array.from({ length: 16 }, () => timedRead()));
  expect(warm.every((w) => w.status === 200)).toBe(true);

  let flooding = true;
  const flood = Promise.all(
    Array.from({ length: 40 }, () => env.app.inject({ method: 'GET', url: `/api/data/notes?text_regex=${CATASTROPHIC}`, headers: a.pk })),
  ).finally(() => (flooding = false));

  await new Promise((r) => setTimeout(r, 150)); // let A's queries take their connections
  const samples: Array<{ ms: number; status: number }> = [];
  while (flooding && samples.length < 20) {
    samples.push(await timedRead());
    await new Promise((r) => setTimeout(r, 50));
  }
  const answers = await flood;

  expect(samples.length).toBeGreaterThan(2);
  expect(samples.every((s) => s.status === 200)).toBe(true);
  const worst = Math.max(...samples.map((s) => s.ms));
  expect(worst, `B's reads took ${samples.map((s) => Math.round(s.ms)).join(', ')} ms`).toBeLessThan(1000);
  // A got answers, never a 5xx: results, timeouts (400) or "busy, retry" (429 with Retry-After).
  for (const r of answers) expect([200, 400, 429], r.body.slice(0, 120)).toContain(r.statusCode);
  const busy = answers.find((r) => r.statusCode === 429);
  if (busy) {
    expect(busy.json().code).toBe('project_busy');
    expect(busy.headers['retry-after']).toBe('1');
  }
}, 60_000);

describe('the per-project gate of the tenant pool', () => {
  it('a project beyond its slots waits, then gets 429 project_busy; other projects pass', async () => {
    const { createDb } = await import('../../src/db/pool.js');
    const db = createDb(env.databaseUrl, { tenant: 4, admin: 1 }, { projectConcurrency: 1, queueWaitMs: 200, publishableStatementTimeoutMs: 1500 });
    try {
      const scopeA = { projectId: a.id, keyKind: 'secret' as const };
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const first = db.read(scopeA, async (q) => {
        await sql`SELECT 1`.execute(q);
        await held;
      });
      await new Promise((r) => setTimeout(r, 20));
      const t0 = performance.now();
      await expect(db.read(scopeA, (q) => sql`SELECT 1`.execute(q))).rejects.toMatchObject({ code: 'project_busy', status: 429, headers: { 'retry-after': '1' } });
      expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
      // Project B is not affected by A's full lane.
      await db.read({ projectId: b.id, keyKind: 'secret' }, (q) => sql`SELECT 1`.execute(q));
      // A waiter gets the slot as soon as it is freed.
      const waiting = db.read(scopeA, (q) => sql`SELECT 2 AS n`.execute(q));
      release();
      await first;
      expect((await waiting).rows).toEqual([{ n: 2 }]);
    } finally {
      await db.close();
    }
  });
});
