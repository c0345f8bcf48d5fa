/**
 * Fault: PostgreSQL is away at the turn of a minute. graphile-worker's own crontab then
 * rejected a promise nobody could handle and the worker process exited. Our crontab
 * (src/worker/cron.ts) must not throw, must say so, and must schedule the minute once the
 * database is back: once for the whole cluster, and after a long outage each item once, not
 * once per missed minute.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startCron } from '../../src/worker/cron.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

let env: TestEnv;
let proxy: TcpProxy;

beforeAll(async () => {
  const db = new URL(inject('templateUrl'));
  proxy = await startTcpProxy(db.hostname, Number(db.port));
  env = await createTestEnv({ DB_CONNECT_TIMEOUT_MS: '1000' }, { route: (url) => proxy.via(url) });
});
afterAll(async () => {
  await proxy.restore().catch(() => {});
  await env.close();
  await proxy.close();
});

const CRONTAB = '* * * * * webhooks:dispatch\n*/10 * * * * social:delete_expired_states';
const at = (hhmmss: string) => Date.parse(`2026-01-01T${hhmmss}Z`);

async function scheduled(task: string): Promise<string[]> {
  const { rows } = await sql<{ run_at: Date }>`
    SELECT j.run_at FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
     WHERE t.identifier = ${task} ORDER BY j.run_at`.execute(env.ctx.db.admin);
  return rows.map((r) => r.run_at.toISOString().slice(11, 19));
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the crontab when PostgreSQL is away at the turn of a minute', () => {
  it('does not throw, says so, and schedules the minute once the database is back, once for all processes', async () => {
    let now = at('12:00:30');
    const opts = { log: env.ctx.log, now: () => now, retryMs: 50 };
    const a = startCron(env.ctx.db.pool, CRONTAB, opts);
    const b = startCron(env.ctx.db.pool, CRONTAB, opts); // a second worker process

    now = at('12:01:00.001');
    await proxy.cut();
    await expect(a.tick()).resolves.toBeUndefined();
    expect(a.failing()).toBe(true);
    expect(env.logs.filter((l) => l.includes('crontab: scheduling failed'))).toHaveLength(1);

    await proxy.restore();
    await until(() => !a.failing()); // its retry timer
    await b.tick();
    expect(await scheduled('webhooks:dispatch')).toEqual(['12:01:00']);

    // A long outage: minutes 12:02 to 12:12 missed; each item is scheduled once, at its latest minute.
    now = at('12:12:00.5');
    await Promise.all([a.tick(), b.tick()]);
    expect(await scheduled('webhooks:dispatch')).toEqual(['12:01:00', '12:12:00']);
    expect(await scheduled('social:delete_expired_states')).toEqual(['12:10:00']);
    await Promise.all([a.stop(), b.stop()]);
  });
});
