/**
 * Fault: a worker process is killed (SIGKILL, out of memory) while it holds jobs. graphile-
 * worker alone would leave them locked for 4 hours (mail stuck `queued`). Another worker process
 * must take them over after WORKER_DEAD_AFTER_MS, and every message must reach the provider
 * exactly once: the one the dead worker had handed over already is not sent again (the retry
 * carries the same Idempotency-Key, which the provider honours).
 *
 * Real processes: two `plinth worker`s (src/worker/main.ts) spawned on this file's database,
 * the fake Resend in this process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject, type TestProject } from '../helpers/fixtures.js';
import type { TestEnv } from '../helpers/context.js';
import type { FakeResend } from '../fakes/resend.js';
import { logsOf, send, startMailTest, stopMailTest, PLATFORM_KEY } from '../modules/mail/helpers.js';

const DEAD_AFTER_MS = 2000;
const MAILS = 24;

let env: TestEnv;
let fake: FakeResend;
let project: TestProject;
let dataDir: string;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  ({ env, fake } = await startMailTest({ MAIL_MONTHLY_LIMIT: '-1', RATE_LIMIT_SCALE: '100' }));
  project = await makeProject(env.ctx);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-workers-'));
});
afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  await stopMailTest(env, fake);
  rmSync(dataDir, { recursive: true, force: true });
});

/** A `plinth worker` process on this file's database, sending through the fake Resend. */
function spawnWorker(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker/main.ts'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      PLINTH_DATA_DIR: dataDir,
      DATABASE_URL: env.databaseUrl,
      ENCRYPTION_KEY: env.config.encryptionKey.toString('hex'),
      DASHBOARD_JWT_SECRET: env.config.dashboardJwtSecret.toString('hex'),
      RESEND_API_KEY: PLATFORM_KEY,
      RESEND_BASE_URL: fake.url,
      MAIL_MONTHLY_LIMIT: '-1', // as the API's (the usage-alert check reads it too)
      WORKER_CONCURRENCY: '4',
      WORKER_DEAD_AFTER_MS: String(DEAD_AFTER_MS),
    },
  });
  workers.push(child);
  return child;
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const heartbeats = async () =>
  (await sql<{ process_id: string; worker_ids: string[] }>`SELECT process_id, worker_ids FROM worker_heartbeats`.execute(env.ctx.db.admin)).rows;

/** Spawns a worker and waits for its heartbeat row (all its workers listed): returns its worker ids. */
async function startWorkerProcess(): Promise<{ child: ChildProcess; ids: string[] }> {
  const before = new Set((await heartbeats()).map((h) => h.process_id));
  const child = spawnWorker();
  const row = await until('the worker heartbeat', async () => (await heartbeats()).find((h) => !before.has(h.process_id) && h.worker_ids.length === 4));
  return { child, ids: row.worker_ids };
}

const lockedBy = async (ids: string[]) =>
  Number((await sql<{ n: string }>`SELECT count(*) AS n FROM graphile_worker._private_jobs WHERE locked_by = ANY(${ids})`.execute(env.ctx.db.admin)).rows[0]!.n);

describe('a worker process killed with SIGKILL while sending mail', () => {
  it('its locked jobs are taken over by another worker and every mail reaches the provider exactly once', async () => {
    const victim = await startWorkerProcess();
    const survivor = await startWorkerProcess();
    fake.latencyMs = 400; // provider calls in flight when the victim dies

    for (let i = 0; i < MAILS; i++) {
      const res = await send(env, project, { to: `user${i}@example.com`, subject: `mail ${i}`, text: 'hello' });
      expect(res.statusCode).toBe(200);
    }
    await until('the victim to hold jobs', async () => (await lockedBy(victim.ids)) > 0);
    victim.child.kill('SIGKILL');
    await new Promise((r) => victim.child.once('exit', r));
    expect(await lockedBy(victim.ids)).toBeGreaterThan(0); // left locked, as graphile-worker alone would for 4 hours

    const killedAt = Date.now();
    const logs = await until('every mail to leave `queued`', async () => {
      const rows = await logsOf(env, project.id);
      return rows.length === MAILS && rows.every((l) => l.status !== 'queued') && rows;
    });
    if (process.env.PLINTH_MEASURE) console.log(`jobs of the killed worker done ${Date.now() - killedAt} ms after the kill`);

    expect(await lockedBy(victim.ids)).toBe(0);
    expect(logs.every((l) => l.status === 'sent' && l.provider_email_id)).toBe(true);
    // Exactly once: one stored message per log, and the logs point at distinct messages.
    const delivered = fake.sentBy(PLATFORM_KEY);
    expect(delivered).toHaveLength(MAILS);
    expect(new Set(delivered.map((m) => m.subject)).size).toBe(MAILS);
    expect(new Set(logs.map((l) => l.provider_email_id))).toEqual(new Set(delivered.map((m) => m.id)));
    // Taken over by the survivor: the dead process's heartbeat row is gone, its own remains.
    expect((await heartbeats()).map((h) => h.worker_ids)).toEqual([survivor.ids]);

    survivor.child.kill('SIGTERM');
    await new Promise((r) => survivor.child.once('exit', r));
    expect(await heartbeats()).toEqual([]); // a clean stop removes its row
  });
});
