/**
 * Threat: a node whose cache-invalidation listener died with a PostgreSQL restart keeps
 * honouring a rotated key (or old collection rules) on its cache, forever if the reconnection
 * gave up. While the listener is down the node must not trust its caches, it must reconnect
 * however long the database stays away, and what it cached before must be gone afterwards.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBus, type Bus } from '../../src/db/bus.js';
import { ProjectCache } from '../../src/modules/projects/cache.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeProject } from '../helpers/fixtures.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

let env: TestEnv;
let pool: pg.Pool;
let proxy: TcpProxy;
const buses: Bus[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  pool = new pg.Pool({ connectionString: env.databaseUrl, max: 4 });
  const u = new URL(env.databaseUrl);
  proxy = await startTcpProxy(u.hostname, Number(u.port));
});
afterAll(async () => {
  for (const b of buses) await b.close();
  await proxy.close();
  await pool.end();
  await env.close();
});

/** A bus whose listening connection goes through the proxy (the one the test cuts). */
async function proxiedBus(): Promise<Bus> {
  const b = await createBus(proxy.via(env.databaseUrl), pool, { heartbeatMs: 500, reconnectMinMs: 50, reconnectMaxMs: 400 });
  buses.push(b);
  return b;
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the cache-invalidation listener across a database outage', () => {
  it('notices the cut, keeps retrying through a long outage, and hears events again', async () => {
    const b = await proxiedBus();
    let resets = 0;
    b.onReset(() => resets++);
    const seen: string[] = [];
    b.subscribe((e) => seen.push(e.id));
    expect(b.listening).toBe(true);

    await proxy.cut();
    await until(() => !b.listening);
    expect(resets).toBe(1);
    await new Promise((r) => setTimeout(r, 2500)); // several failed reconnection attempts
    expect(b.listening).toBe(false);

    await proxy.restore();
    await until(() => b.listening);
    expect(resets).toBe(2); // once more on reconnection: events of the outage were missed

    const other = await createBus(env.databaseUrl, pool);
    buses.push(other);
    await other.publish({ type: 'project_changed', id: 'after-outage' });
    expect(seen).toEqual(['after-outage']);
  });

  it('refuses a key rotated while its listener was down, and after it is back', async () => {
    const project = await makeProject(env.ctx);
    const b = await proxiedBus();
    const cache = new ProjectCache(env.ctx.db.admin, env.config.encryptionKey, b);
    expect((await cache.resolveKey(project.secretKey))?.kind).toBe('secret'); // cached

    await proxy.cut();
    await until(() => !b.listening);
    const res = await env.app.inject({
      method: 'POST',
      url: `/api/projects/${project.id}/api-key`,
      headers: project.owner.auth,
      payload: { keyType: 'secret' },
    });
    expect(res.statusCode).toBe(200);
    expect(await cache.resolveKey(project.secretKey)).toBeNull(); // not from the stale cache
    const fresh = res.json().data.apiKey as string;
    expect((await cache.resolveKey(fresh))?.kind).toBe('secret');

    await proxy.restore();
    await until(() => b.listening);
    expect(await cache.resolveKey(project.secretKey)).toBeNull();
  });
});
