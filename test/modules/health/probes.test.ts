/**
 * Liveness vs readiness. /livez says only that the process runs (no database call: an
 * orchestrator must not restart nodes because PostgreSQL is away); /readyz says "send traffic
 * here" and turns 503 when the database does not answer or the node is shutting down, while
 * /api/health keeps its documented shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';

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

const get = (url: string) => env.app.inject({ method: 'GET', url });

describe('/livez and /readyz', () => {
  it('both answer 200 on a healthy node', async () => {
    expect((await get('/livez')).json()).toEqual({ status: 'ok' });
    const ready = await get('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok' });
  });

  it('not ready while the database is unreachable, still alive; ready again once it is back', async () => {
    await proxy.cut();
    try {
      const ready = await get('/readyz');
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({ status: 'unavailable', reason: 'database_unreachable' });
      expect((await get('/livez')).statusCode).toBe(200);
      expect((await get('/api/health')).statusCode).toBe(503); // unchanged, as documented
    } finally {
      await proxy.restore();
    }
    expect((await get('/readyz')).statusCode).toBe(200);
  });

  it('not ready as soon as the node starts shutting down, while it still serves requests', async () => {
    env.ctx.lifecycle.draining = true;
    try {
      const ready = await get('/readyz');
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({ status: 'unavailable', reason: 'shutting_down' });
      expect((await get('/livez')).statusCode).toBe(200);
      const health = await get('/api/health');
      expect(health.statusCode).toBe(200);
      expect(health.json()).toMatchObject({ status: 'ok', dependencies: { database: 'connected' } });
    } finally {
      env.ctx.lifecycle.draining = false;
    }
  });
});
