/**
 * GET /metrics on the API's own port, only when METRICS_TOKEN is set, and only with
 * `Authorization: Bearer <token>` (compared in constant time). Registered outside the route
 * groups (src/server.ts): no surface, so no CORS grant; hidden from the OpenAPI document.
 * Without a token the route does not exist (404), unless METRICS_PORT serves it on loopback
 * (listener.ts). docs/scaling.md, "Metrics and probes".
 */
import { safeEqual } from '../../../lib/crypto.js';
import { Errors } from '../../../lib/errors.js';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';

function bearer(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
}

export default async function metricsRoutes(app: App, ctx: AppContext): Promise<void> {
  const token = ctx.config.metrics.token;
  if (!token) return;
  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    const given = bearer(req.headers.authorization);
    if (given === undefined || !safeEqual(given, token)) {
      throw Errors.unauthorized('A valid metrics token is required.', undefined, { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
    }
    const body = await ctx.metrics.registry.metrics();
    return reply.header('cache-control', 'no-store').type(ctx.metrics.registry.contentType).send(body);
  });
}
