/**
 * Fault: the Redis that holds the shared rate limits dies or hangs. The API must keep serving
 * (no 500, no request waiting on Redis beyond the command timeout), limits must still hold,
 * counted per node, the outage must be logged once (not per request) and shown by
 * /api/health, and once Redis is back the limits must be shared through it again.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeProject, type TestProject } from '../helpers/fixtures.js';
import { redisServerAvailable, startRedisServer, type RedisServer } from '../helpers/redis-server.js';

if (!redisServerAvailable) console.warn('redis-server is not installed: skipping the Redis fault tests (apt-get install redis-server)');

describe.skipIf(!redisServerAvailable)('rate limits when Redis goes away', () => {
  let redis: RedisServer;
  let env: TestEnv;
  let inspect: Redis;

  beforeAll(async () => {
    redis = await startRedisServer();
    // RATE_LIMIT_SCALE 0.005: a free project (600 a minute) may make 3 public requests a minute.
    env = await createTestEnv({ REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '300', RATE_LIMIT_SCALE: '0.005' });
    inspect = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    inspect.on('error', () => {});
    // The outages below are counted from a healthy start: on a busy machine the first connection
    // can take longer than the 300 ms a start waits for it, which is logged (as unreachable, then
    // reachable again) before any test begins.
    for (let i = 0; i < 400 && (await health()).dependencies.redis !== 'connected'; i++) await new Promise((r) => setTimeout(r, 25));
    logsFrom = env.logs.length;
  });
  afterAll(async () => {
    inspect.disconnect();
    await env?.close();
    await redis?.stop();
  });

  async function freshProject(): Promise<TestProject> {
    const p = await makeProject(env.ctx);
    await makeCollection(env.ctx, p.id, 'notes');
    return p;
  }

  /** Four public requests of a fresh project: the first three pass, the fourth is over the limit. */
  async function limitHolds(p: TestProject): Promise<void> {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await env.app.inject({ method: 'GET', url: '/api/data/notes', headers: p.sk })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
  }

  const countInRedis = async (p: TestProject) => Number(await inspect.get(`plinth:rl:project:${p.id}:rpm`));
  const health = async () => (await env.app.inject({ method: 'GET', url: '/api/health' })).json();
  let logsFrom = 0;
  const lines = (text: string) => env.logs.slice(logsFrom).filter((l) => l.includes(text));

  it('counts in Redis while it answers', async () => {
    const p = await freshProject();
    await limitHolds(p);
    expect(await countInRedis(p)).toBe(4);
    expect(await health()).toMatchObject({ status: 'ok', dependencies: { database: 'connected', redis: 'connected' } });
  });

  it('a hung Redis: requests still answer (after the command timeout) and limits hold on this node', async () => {
    redis.pause();
    try {
      const p = await freshProject();
      await limitHolds(p);
      expect(await health()).toMatchObject({ status: 'degraded', dependencies: { redis: 'disconnected' } });
    } finally {
      redis.resume();
    }
  });

  it('a killed Redis: requests still answer, limits hold on this node, logged once', async () => {
    await redis.kill();
    const p = await freshProject();
    await limitHolds(p);
    const h = await env.app.inject({ method: 'GET', url: '/api/health' });
    expect(h.statusCode).toBe(200);
    expect(h.json()).toMatchObject({ status: 'degraded', dependencies: { database: 'connected', redis: 'disconnected' } });

    const warned = lines('Redis unreachable');
    expect(warned).toHaveLength(1);
    expect(JSON.parse(warned[0]!)).toMatchObject({ level: 40, reason: expect.any(String) });
    expect(env.logs.filter((l) => /"level":50/.test(l))).toEqual([]);
  });

  it('Redis back: limits are counted in Redis again, and that is logged once', async () => {
    await redis.start();
    await inspect.connect().catch(() => {});
    // ioredis reconnects with backoff: wait until health says it is back (no timing asserted).
    for (let i = 0; i < 400 && (await health()).dependencies.redis !== 'connected'; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await health()).toMatchObject({ status: 'ok', dependencies: { redis: 'connected' } });

    const p = await freshProject();
    await limitHolds(p);
    expect(await countInRedis(p)).toBe(4);
    expect(lines('Redis reachable again')).toHaveLength(1);
    expect(lines('Redis unreachable')).toHaveLength(1);
  });
});
