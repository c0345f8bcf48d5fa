/**
 * Fault: PostgreSQL goes away again and again under a job worker, while mail is being sent.
 * graphile-worker alone exits the process at the turn of a minute (its crontab's query fails,
 * an unhandled rejection), and a runner that cannot record a finished job stops for good with
 * the job locked: after a few cuts nothing is delivered and nothing says so. A worker must ride
 * out every cut like an API node: never exit, replace lost runners and free their jobs, resume
 * within seconds, report when it cannot work, and deliver every accepted mail exactly once.
 *
 * Real processes: one `plinth worker` (src/worker/main.ts, 8 runners) whose database is behind
 * a TCP forwarder the test cuts; the API in this process on a direct connection (every send is
 * accepted); the fake Resend here counts deliveries.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.js';
import { makeProject, type TestProject } from '../helpers/fixtures.js';
import type { TestEnv } from '../helpers/context.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import type { FakeResend } from '../fakes/resend.js';
import { logsOf, send, startMailTest, stopMailTest, PLATFORM_KEY } from '../modules/mail/helpers.js';

const RUNNERS = 8;
const DEAD_AFTER_MS = 3000; // a heartbeat every 500 ms: cuts keep meeting it

let env: TestEnv;
let fake: FakeResend;
let project: TestProject;
let proxy: TcpProxy;
let dataDir: string;
let metricsPort: number;
let worker: ChildProcess;
let exited: { code: number | null; signal: string | null } | null = null;
let stderr = '';

beforeAll(async () => {
  ({ env, fake } = await startMailTest({ MAIL_MONTHLY_LIMIT: '-1', RATE_LIMIT_SCALE: '100' }));
  project = await makeProject(env.ctx);
  const db = new URL(env.databaseUrl);
  proxy = await startTcpProxy(db.hostname, Number(db.port));
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-worker-outage-'));
  metricsPort = await freePort();
  worker = spawn(process.execPath, ['--import', 'tsx', 'src/worker/main.ts'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.PLINTH_MEASURE ? 'debug' : 'warn',
      PLINTH_DATA_DIR: dataDir,
      DATABASE_URL: proxy.via(env.databaseUrl),
      DB_CONNECT_TIMEOUT_MS: '1000',
      ENCRYPTION_KEY: env.config.encryptionKey.toString('hex'),
      DASHBOARD_JWT_SECRET: env.config.dashboardJwtSecret.toString('hex'),
      RESEND_API_KEY: PLATFORM_KEY,
      RESEND_BASE_URL: fake.url,
      // As the API's: else the worker holds the project to the free plan's 100 mails, and its
      // usage-alert check (every five minutes) mails the owner one more message with this key.
      MAIL_MONTHLY_LIMIT: '-1',
      WORKER_CONCURRENCY: String(RUNNERS),
      WORKER_DEAD_AFTER_MS: String(DEAD_AFTER_MS),
      METRICS_PORT: String(metricsPort),
    },
  });
  for (const out of [worker.stdout!, worker.stderr!]) out.on('data', (c: Buffer) => (stderr += c.toString()));
  worker.once('exit', (code, signal) => (exited = { code, signal }));
  // Up once its heartbeat row lists all its runners.
  await until('the worker heartbeat', async () => (await heartbeatIds()).length === RUNNERS, 60_000);
}, 90_000);

afterAll(async () => {
  if (process.env.PLINTH_MEASURE) writeFileSync(path.join(os.tmpdir(), 'plinth-worker-outage.log'), stderr);
  await proxy?.restore().catch(() => {});
  if (worker && !exited) {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
  await proxy?.close();
  await stopMailTest(env, fake);
  rmSync(dataDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** GET on the worker's loopback listener (/readyz, /metrics). */
async function probe(p: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${metricsPort}${p}`);
  return { status: res.status, body: await res.text() };
}

function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

/** Sends mail steadily (every accepted one must be delivered), until stopped. */
function sender() {
  let on = true;
  let accepted = 0;
  const done = (async () => {
    while (on) {
      const res = await send(env, project, { to: `user${accepted}@example.com`, subject: `outage mail ${accepted}`, text: 'hello' });
      expect(res.statusCode, res.body).toBe(200); // the API's own database connection is never cut
      accepted++;
      await sleep(120);
    }
  })();
  return { stop: async () => ((on = false), await done, accepted) };
}

/** Jobs locked by an id that is not one of the worker's live runners (webhooks:dispatch runs for a minute). */
const jobsLockedByTheGone = async () =>
  Number((await sql<{ n: string }>`
    SELECT count(*) AS n FROM graphile_worker._private_jobs
     WHERE locked_by IS NOT NULL AND locked_by <> ALL(${await heartbeatIds()}::text[])`.execute(env.ctx.db.admin)).rows[0]!.n);
const jobsPending = async () =>
  Number((await sql<{ n: string }>`SELECT count(*) AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'mail.send'`.execute(env.ctx.db.admin)).rows[0]!.n);
const heartbeatSeen = async () =>
  (await sql<{ t: Date }>`SELECT max(last_seen) AS t FROM worker_heartbeats`.execute(env.ctx.db.admin)).rows[0]!.t?.getTime() ?? 0;

const heartbeatIds = async () =>
  (await sql<{ worker_ids: string[] }>`SELECT worker_ids FROM worker_heartbeats`.execute(env.ctx.db.admin)).rows.flatMap((r) => r.worker_ids);

const cuts: string[] = [];
/** Cuts PostgreSQL off from the worker for `ms`, then lets it back. */
async function cut(kind: string, ms: number, during?: () => Promise<void>): Promise<void> {
  await proxy.cut();
  cuts.push(kind);
  await Promise.all([sleep(ms), during?.()]);
  await proxy.restore();
}

/** The next turn of a minute (the crontab's tick), ms from now. */
const toNextMinute = () => 60_000 - (Date.now() % 60_000);
let tickCuts = 0;
let tickMinute = 0;
/** When the crontab's tick is near, cut across it: from 400 ms before to 1.2 s after. */
async function acrossTheTickIfNear(): Promise<void> {
  if (toNextMinute() > 5000) return;
  tickMinute = Date.now() + toNextMinute();
  await sleep(toNextMinute() - 400);
  await cut('across the crontab tick', 1600);
  tickCuts++;
  await sleep(800);
}

describe('PostgreSQL cut under a job worker again and again while mail is sent', () => {
  it('the worker never exits, replaces lost runners, says when it cannot work, and every accepted mail is delivered exactly once', async () => {
    fake.latencyMs = 200; // provider calls in flight when the database goes
    const mail = sender();
    let readyzWhileDown: { status: number; body: string } | undefined;

    const steps: Array<() => Promise<void>> = [];
    for (let i = 0; i < 6; i++) {
      // Mid-job: a runner has just handed a mail to the provider, and cannot record it.
      steps.push(async () => {
        const before = fake.requests.length;
        await until('a provider call in flight', async () => fake.requests.length > before, 10_000);
        await cut('mid-job', 300 + 200 * (i % 4));
      });
      // Idle moments, between polls, at random offsets.
      steps.push(async () => {
        await sleep(Math.random() * 700);
        await cut('at a random moment', 200 + Math.random() * 1300);
      });
    }
    for (let i = 0; i < 4; i++) {
      // The heartbeat: cut just before the next beat is due.
      steps.push(async () => {
        const seen = await heartbeatSeen();
        await until('a heartbeat', async () => (await heartbeatSeen()) > seen, 10_000);
        await sleep(DEAD_AFTER_MS / 6 - 100);
        await cut('during the heartbeat', 400 + i * 300);
      });
      // The LISTEN reconnect: cut again moments after the database is back.
      steps.push(async () => {
        await cut('before a flap', 800);
        await sleep(60 + i * 60);
        await cut('during the LISTEN reconnect', 300 + i * 100);
      });
    }
    // A long cut: the worker reports it cannot work.
    steps.push(() =>
      cut('long', 8000, async () => {
        await sleep(3000);
        readyzWhileDown = await probe('/readyz');
      }),
    );

    try {
      for (const step of steps) {
        await acrossTheTickIfNear();
        await step();
        await sleep(300 + Math.random() * 900); // back for a while: jobs resume
      }
      // At least one cut across the turn of a minute (it killed the process before).
      if (tickCuts === 0) {
        await sleep(Math.max(0, toNextMinute() - 4000));
        await acrossTheTickIfNear();
      }
    } catch (err) {
      await mail.stop().catch(() => {});
      const file = path.join(os.tmpdir(), `plinth-worker-outage-${process.pid}.log`);
      writeFileSync(file, stderr);
      throw new Error(`${(err as Error).message} after cuts: ${cuts.join(', ')}; worker exit: ${JSON.stringify(exited)}; its log: ${file}`);
    }
    const accepted = await mail.stop();

    expect(cuts.length).toBeGreaterThanOrEqual(20);
    expect(readyzWhileDown?.status).toBe(503);
    expect(JSON.parse(readyzWhileDown!.body)).toEqual({ status: 'unavailable', reason: 'database_unreachable' });

    // Every accepted mail is delivered; sending resumes within moments of the last restore.
    const restoredAt = Date.now();
    const requestsAtRestore = fake.requests.length;
    const resumedMs = await until('a provider call', async () => fake.requests.length > requestsAtRestore, 5000).then(
      () => Date.now() - restoredAt,
      () => 'none', // the backlog was gone already
    );
    const stuck = async (err: Error) => {
      const jobs = await sql`SELECT j.id, t.identifier, attempts, run_at, locked_by, locked_at, last_error FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id`.execute(env.ctx.db.admin);
      const file = path.join(os.tmpdir(), `plinth-worker-outage-${process.pid}.log`);
      writeFileSync(file, stderr);
      throw new Error(`${err.message} (at ${new Date().toISOString()}): jobs ${JSON.stringify(jobs.rows)}; heartbeat ${JSON.stringify(await heartbeatIds())}; worker exit ${JSON.stringify(exited)}; log ${file}`);
    };
    const logs = await until(
      'every mail to be sent',
      async () => {
        const rows = await logsOf(env, project.id);
        return rows.length === accepted && rows.every((l) => l.status === 'sent' && l.provider_email_id) && rows;
      },
      45_000,
    ).catch(stuck);
    if (process.env.PLINTH_MEASURE) console.log(`${cuts.length} cuts, ${accepted} mails, first provider call ${resumedMs} ms and all sent ${Date.now() - restoredAt} ms after the last restore`);
    // No job left behind, none locked by a runner that is gone.
    await until('the mail jobs to be gone and no job locked by a stopped runner', async () => (await jobsPending()) === 0 && (await jobsLockedByTheGone()) === 0, 15_000).catch(stuck);

    // Exactly once: one message per accepted mail at the provider, each log pointing at its own.
    const delivered = fake.sentBy(PLATFORM_KEY);
    expect(delivered.filter((m) => !m.subject.startsWith('outage mail ')), 'no other mail (an alert?)').toEqual([]);
    expect(delivered).toHaveLength(accepted);
    expect(new Set(delivered.map((m) => m.subject)).size).toBe(accepted);
    expect(new Set(logs.map((l) => l.provider_email_id))).toEqual(new Set(delivered.map((m) => m.id)));

    // The process never exited, and it is whole again: all runners up, ready, nothing orphaned.
    expect(exited).toBeNull();
    const ready = await until('the worker to be ready again', async () => (await probe('/readyz')).status === 200 && true, 15_000);
    expect(ready).toBe(true);
    const metrics = (await probe('/metrics')).body;
    expect(sample(metrics, 'plinth_worker_up')).toBe(1);
    expect(sample(metrics, 'plinth_worker_runners', '{state="running"}')).toBe(RUNNERS);
    expect(sample(metrics, 'plinth_worker_runners', '{state="orphaned"}')).toBe(0);
    expect(sample(metrics, 'plinth_worker_runner_restarts_total')).toBeGreaterThan(0); // runners were lost and replaced
    // The stopped runners' ids leave the heartbeat row (a replaced pool's runner may still be finishing its job).
    await until('only the live runners in the heartbeat row', async () => (await heartbeatIds()).length === RUNNERS, 20_000);

    // The crontab scheduled the minute that turned while the database was away.
    const known = await sql<{ last: Date }>`SELECT last_execution AS last FROM graphile_worker._private_known_crontabs WHERE identifier = 'webhooks:dispatch'`.execute(env.ctx.db.admin);
    expect(known.rows[0]!.last.getTime()).toBeGreaterThanOrEqual(Math.floor(tickMinute / 60_000) * 60_000);
    expect(stderr).not.toMatch(/unhandled|UnhandledPromiseRejection/i);
  }, 150_000);
});
