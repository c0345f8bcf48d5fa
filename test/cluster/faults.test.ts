/**
 * Faults in the cluster rig (./rig.ts: two API node processes, two worker processes), each
 * checked for nothing lost and nothing duplicated: a worker SIGKILLed while sending mail, an
 * API node SIGKILLed under load, PostgreSQL gone for every process at once, Redis gone.
 * The S3 store going away is covered on one node by test/modules/storage/storage.s3-down.test.ts
 * (the API nodes keep no storage state of their own, so a second node adds nothing there).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCollection, makeOperator, makeProject, type TestProject } from '../helpers/fixtures.js';
import { call, PLATFORM_MAIL_KEY, redisSkipReason, startRig, until, type Node, type Reply, type Rig } from './rig.js';

let rig: Rig;
/** Real processes on a loaded 2-core machine: generous, the waits inside are bounded by until(). */
const TEST_TIMEOUT = 180_000;
let ipSeq = 0;
const client = () => ({ 'x-forwarded-for': `203.0.113.${++ipSeq}` });

if (redisSkipReason) console.warn(redisSkipReason);

beforeAll(async () => {
  rig = await startRig({ redis: true, env: { TRUST_PROXY: 'true' } });
}, 180_000);
afterAll(async () => {
  await rig?.pg.restore().catch(() => {});
  await rig?.stop();
}, 60_000);

async function notesProject(): Promise<TestProject> {
  const p = await makeProject(rig.env.ctx);
  await makeCollection(rig.env.ctx, p.id, 'notes', [{ key: 'title', type: 'String' }]);
  return p;
}

const db = () => rig.env.ctx.db.admin;

async function titlesInDb(projectId: string): Promise<Map<string, number>> {
  const rows = await sql<{ title: string; n: number }>`
    SELECT data->>'title' AS title, count(*)::int AS n FROM documents WHERE project_id = ${projectId} GROUP BY 1`.execute(db());
  return new Map(rows.rows.map((r) => [r.title, r.n]));
}

async function mailLogs(projectId: string) {
  return db().selectFrom('mail_logs').select(['subject', 'status', 'provider_email_id']).where('project_id', '=', projectId).execute();
}

const lockedBy = async (ids: string[]) =>
  (await sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE locked_by = ANY(${ids})`.execute(db())).rows[0]!.n;

/** Sends `subjects` through the API nodes in turn; each send must be accepted. */
async function sendMails(p: TestProject, subjects: string[]): Promise<void> {
  for (const [i, subject] of subjects.entries()) {
    const res = await call(rig.api[i % rig.api.length]!, 'POST', '/api/mail/send', { headers: p.sk, body: { to: `u${i}@example.com`, subject, text: 'hi' } });
    expect(res.status, res.body).toBe(200);
  }
}

/** Every one of `subjects` sent (log `sent`) and at the provider exactly once. */
async function expectDeliveredOnce(p: TestProject, subjects: string[]): Promise<void> {
  const logs = await until('every mail to leave `queued`', async () => {
    const rows = await mailLogs(p.id);
    return rows.length === subjects.length && rows.every((l) => l.status !== 'queued') && rows;
  });
  expect(logs.filter((l) => l.status !== 'sent')).toEqual([]);
  const atProvider = rig.resend.sentBy(PLATFORM_MAIL_KEY).filter((m) => subjects.includes(m.subject));
  expect(atProvider.map((m) => m.subject).sort()).toEqual([...subjects].sort());
  expect(new Set(logs.map((l) => l.provider_email_id))).toEqual(new Set(atProvider.map((m) => m.id)));
}

describe('a worker process SIGKILLed while sending mail', () => {
  it('its jobs go to the other worker within WORKER_DEAD_AFTER_MS, and every mail reaches the provider exactly once', async () => {
    const p = await notesProject();
    const [victim] = rig.workers as [Node, Node];
    const subjects = Array.from({ length: 40 }, (_, i) => `kill-worker ${i}`);
    rig.resend.latencyMs = 300; // provider calls in flight when the victim dies
    try {
      const sending = sendMails(p, subjects);
      // Killed as soon as it holds jobs, while mail keeps coming in through the API nodes.
      await until('the victim to hold jobs', async () => (await lockedBy(victim.workerIds)) > 0, 60_000, 10);
      await victim.kill('SIGKILL');
      await sending;
      await expectDeliveredOnce(p, subjects); // bounded by until()'s timeout, not graphile-worker's 4 hours
    } finally {
      rig.resend.latencyMs = 0;
    }
    expect(await lockedBy(victim.workerIds)).toBe(0);
    const rows = (await sql<{ worker_ids: string[] }>`SELECT worker_ids FROM worker_heartbeats`.execute(db())).rows;
    expect(rows.flatMap((r) => r.worker_ids)).not.toEqual(expect.arrayContaining(victim.workerIds));
    rig.workers.shift();
    await rig.startWorker(); // two workers again for the next tests
  }, TEST_TIMEOUT);
});

describe('an API node SIGKILLed under load', () => {
  it('clients retrying on the other node lose no acknowledged write, and no write acknowledged at once is stored twice', async () => {
    const p = await notesProject();
    const acked = new Map<string, { id: string; attempts: number }>();
    let next = 0;
    const TOTAL = 200;
    let killed: Promise<void> | undefined;

    /** One client: creates notes in turn, round-robin; on a failed attempt retries on the other node. */
    const clientLoop = async (c: number) => {
      for (let n = next++; n < TOTAL; n = next++) {
        const title = `note ${n}`;
        for (let attempt = 0; ; attempt++) {
          const node = rig.api[(n + c + attempt) % 2]!;
          const res: Reply | null = await call(node, 'POST', '/api/data/notes', { headers: p.sk, body: { title } }).catch(() => null);
          if (res && res.status >= 200 && res.status < 300) {
            acked.set(title, { id: res.json()._id, attempts: attempt + 1 });
            break;
          }
          if (res) expect(res.status, res.body).toBeGreaterThanOrEqual(500); // a dying node, never a client error
          if (attempt > 20) throw new Error(`${title}: no node took it`);
        }
        if (acked.size === 60) killed ??= rig.api[0]!.kill('SIGKILL');
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, c) => clientLoop(c)));
    await killed;
    expect(acked.size).toBe(TOTAL);

    const stored = await titlesInDb(p.id);
    const ids = new Set((await db().selectFrom('documents').select('id').where('project_id', '=', p.id).execute()).map((r) => r.id));
    for (const [title, { id, attempts }] of acked) {
      expect(ids.has(id), `${title} acknowledged as ${id}`).toBe(true);
      // A retry after a lost answer may store a second copy (the client could not know); one attempt, one row.
      if (attempts === 1) expect(stored.get(title), title).toBe(1);
    }
    await rig.restartApi(0);
  }, TEST_TIMEOUT);
});

describe('PostgreSQL unreachable for every process', () => {
  it('requests fail fast with 503 + Retry-After, health says so, and nodes and workers recover without a restart', async () => {
    const p = await notesProject();
    const op = await makeOperator(rig.env.ctx);
    const own = await makeProject(rig.env.ctx, op);
    await makeCollection(rig.env.ctx, own.id, 'notes');
    const pids = [...rig.api, ...rig.workers].map((n) => n.child.pid);

    const acked: string[] = [];
    const statuses: number[] = [];
    let stop = false;
    let n = 0;
    /** Writes and reads on both nodes for as long as the test runs; records every answer. */
    const load = async () => {
      while (!stop) {
        const title = `pg ${n++}`;
        const node = rig.api[n % 2]!;
        const res = await call(node, 'POST', '/api/data/notes', { headers: p.sk, body: { title }, timeoutMs: 15_000 });
        statuses.push(res.status);
        if (res.status === 201 || res.status === 200) acked.push(title);
        else {
          expect(res.status, res.body).toBe(503);
          expect(res.headers.get('retry-after')).toBe('5');
          expect(res.json()).toMatchObject({ success: false, code: 'database_unavailable' });
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const loaders = [load(), load(), load(), load()];
    await until('some writes before the outage', async () => acked.length >= 20);

    await rig.pg.cut();
    for (const node of rig.api) {
      const health = await until(`${node.name} health to report the outage`, async () => {
        const h = await call(node, 'GET', '/api/health');
        return h.status === 503 && h;
      });
      expect(health.json()).toMatchObject({ status: 'error', dependencies: { database: 'disconnected' } });
    }
    await until('requests to be refused with 503 during the outage', async () => statuses.filter((s) => s === 503).length >= 20);
    const mailDuring = await call(rig.api[0]!, 'POST', '/api/mail/send', { headers: p.sk, body: { to: 'x@example.com', subject: 'during', text: 't' } });
    expect(mailDuring.status).toBe(503);

    await rig.pg.restore();
    for (const node of rig.api) await until(`${node.name} to be healthy again`, async () => (await call(node, 'GET', '/api/health')).status === 200);
    const after = acked.length;
    await until('writes to succeed again on both nodes', async () => acked.length >= after + 20);
    stop = true;
    await Promise.all(loaders);

    // Nothing acknowledged was lost; each title was sent once, so none is stored twice.
    const stored = await titlesInDb(p.id);
    for (const title of acked) expect(stored.get(title), title).toBe(1);
    // The same processes (none restarted) serve, and the workers deliver again.
    expect([...rig.api, ...rig.workers].map((x) => x.child.pid)).toEqual(pids);
    expect([...rig.api, ...rig.workers].every((x) => x.alive())).toBe(true);
    const subjects = ['after the outage 1', 'after the outage 2', 'after the outage 3', 'after the outage 4'];
    await sendMails(p, subjects);
    await expectDeliveredOnce(p, subjects);

    // The cache-invalidation bus came back too: a key rotated on one node dies on the other.
    for (const node of rig.api) expect((await call(node, 'GET', '/api/data/notes', { headers: own.sk })).status).toBe(200);
    const rotated = await call(rig.api[0]!, 'POST', `/api/projects/${own.id}/api-key`, { headers: op.auth, body: { keyType: 'secret' } });
    expect(rotated.status, rotated.body).toBe(200);
    expect((await call(rig.api[1]!, 'GET', '/api/data/notes', { headers: own.sk })).status).toBe(401);
  }, TEST_TIMEOUT);
});

describe.skipIf(!!redisSkipReason)('Redis gone', () => {
  it('the API keeps serving, health is degraded, the outage is logged, and limits hold per node', async () => {
    const p = await notesProject();
    const since = rig.api.map((n) => n.lines.length);
    await rig.redis!.kill();
    for (const node of rig.api) {
      expect((await call(node, 'GET', '/api/data/notes', { headers: p.sk })).status).toBe(200);
      const h = await call(node, 'GET', '/api/health');
      expect(h.status).toBe(200);
      expect(h.json()).toMatchObject({ status: 'degraded', dependencies: { database: 'connected', redis: 'disconnected' } });
    }
    for (const node of rig.api) expect(node.lines.filter((l) => l.includes('Redis unreachable'))).toHaveLength(1);

    const ip = client();
    const attempt = (node: Node) => call(node, 'POST', '/api/auth/login', { headers: ip, body: { email: 'nobody@example.com', password: 'wrong password' } });
    const [a, b] = rig.api as [Node, Node];
    for (let i = 0; i < 10; i++) expect((await attempt(a)).status).toBe(401);
    expect((await attempt(a)).status).toBe(429); // the limit holds on this node...
    expect((await attempt(b)).status).toBe(401); // ...counted per node while Redis is away
    rig.api.forEach((node, i) => expect(node.lines.slice(since[i]).filter((l) => /"level":50/.test(l))).toEqual([])); // no error per request
  }, TEST_TIMEOUT);
});
