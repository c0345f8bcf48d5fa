/**
 * Shutdown order: `db.close()` must leave no connection open, including pool connections only
 * graphile-worker used (the admin Kysely never ran a query), and must not resolve before they
 * are gone: the embedded database is stopped right after, and a connection still open then is
 * cut off with a FATAL that its error handlers log.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/pool.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(async () => {
  await env.close();
});

async function livePids(pids: number[]): Promise<number[]> {
  const c = new pg.Client({ connectionString: env.databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids]);
    return rows.map((r) => r.pid);
  } finally {
    await c.end();
  }
}

describe('db.close()', () => {
  it('closes connections opened on the raw pool and waits until they have ended', async () => {
    const db = createDb(env.databaseUrl, { tenant: 2, admin: 4 });
    // Four connections at once, the way graphile-worker uses the pool (never through Kysely).
    const pids = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const client = await db.pool.connect();
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)');
        client.release();
        return rows[0]!.pid;
      }),
    );
    expect(new Set(pids).size).toBe(4);
    await db.close();
    expect(db.pool.totalCount).toBe(0);
    // Server side the backends exit just after the socket closes: allow them a moment.
    for (let i = 0; i < 20 && (await livePids(pids)).length; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await livePids(pids)).toEqual([]);
  });
});
