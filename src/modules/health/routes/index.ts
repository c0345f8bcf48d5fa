/**
 * GET /api/health: the service and what it depends on. 503 when the database does not answer;
 * 200 `degraded` when Redis (REDIS_URL) is away: the API serves, with rate limits per node.
 *
 * The probes (docs/scaling.md, "Metrics and probes"):
 * - GET /livez: the process runs its event loop. No database call: a restart would not bring
 *   a database back, so an orchestrator must not kill nodes because PostgreSQL is away.
 * - GET /readyz: send traffic here. 503 while shutting down (first thing on SIGTERM, before the
 *   listener closes) or when the database does not answer. Migrations are done by construction:
 *   a node listens only after boot has applied them (src/boot.ts).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { selectOne } from '../queries.js';

const ProbeBody = Type.Object({ status: Type.String(), reason: Type.Optional(Type.String()) });

const HealthBody = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('error')]),
  timestamp: Type.String(),
  dependencies: Type.Object({ database: Type.String(), redis: Type.Optional(Type.String()) }),
});

async function ping(fn: () => Promise<unknown>, ms = 1000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([fn(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)))]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export default async function healthRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/', { schema: { hide: true } }, async () => ({ status: 'success', message: 'Plinth API is running' }));

  app.get('/livez', { schema: { tags: ['health'], summary: 'Liveness: the process is running', response: { 200: ProbeBody } } }, async () => ({
    status: 'ok',
  }));

  app.get(
    '/readyz',
    { schema: { tags: ['health'], summary: 'Readiness: this node takes traffic (database reachable, not shutting down)', response: { 200: ProbeBody, 503: ProbeBody } } },
    async (_req, reply) => {
      reply.header('cache-control', 'no-store');
      if (ctx.lifecycle.draining) return reply.status(503).send({ status: 'unavailable', reason: 'shutting_down' });
      if (!(await ping(() => selectOne(ctx.db.admin)))) return reply.status(503).send({ status: 'unavailable', reason: 'database_unreachable' });
      return { status: 'ok' };
    },
  );

  app.get(
    '/api/health',
    { schema: { tags: ['health'], summary: 'Service and database health', response: { 200: HealthBody, 503: HealthBody } } },
    async (_req, reply) => {
      const dbUp = await ping(() => selectOne(ctx.db.admin));
      const limits = ctx.limiter.status();
      const redisDown = limits === 'redis-down';
      const body = {
        status: !dbUp ? ('error' as const) : redisDown ? ('degraded' as const) : ('ok' as const),
        timestamp: ctx.clock.now().toISOString(),
        dependencies: {
          database: dbUp ? 'connected' : 'disconnected',
          ...(limits === 'memory' ? {} : { redis: redisDown ? 'disconnected' : 'connected' }),
        },
      };
      return reply.status(dbUp ? 200 : 503).send(body);
    },
  );
}
