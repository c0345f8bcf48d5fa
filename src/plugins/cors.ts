/**
 * CORS (docs/wire-compatibility.md §1.4), decided on the ROUTED route, never on the raw URL: the router decodes
 * percent-escapes (`/api/%70rojects` is `/api/projects`), so any test of `req.url` can be
 * walked around. Each route carries its surface in its config (`config.surface`, stamped per
 * route group by src/routes.ts):
 * - `public`: echo the caller's Origin with credentials (the SDK sends
 *   `credentials: "include"` from browsers) and reflect the requested headers (apps add their
 *   own through the SDK's `headers` option);
 * - `dashboard`: only the configured dashboard origins, and a fixed list of headers;
 * - anything else (no route, /docs): no CORS grant at all.
 *
 * Preflights: @fastify/cors answers them in its onRequest hook, on whichever route matched the
 * OPTIONS request. So every routed path also gets an OPTIONS route (registerPreflightRoutes),
 * and a preflight takes the surface of the route its Access-Control-Request-Method names at
 * that routed path. A path no route matches (even after decoding) gets no grant and a 404.
 */
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { registerRouteTable, routeTableOf, shapeOf, type RouteTable } from './route-table.js';

export type Surface = 'public' | 'dashboard';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which CORS policy (and route group) the route belongs to. */
    surface?: Surface;
    /** The route's authentication group (src/route-groups.ts). */
    auth?: string;
  }
  interface FastifyRequest {
    /** Set by @fastify/cors when its hook granted this preflight. */
    corsPreflightEnabled?: boolean;
  }
}

const DASHBOARD_HEADERS = ['x-api-key', 'authorization', 'content-type', 'x-refresh-token', 'x-refresh-token-mode', 'user-agent', 'x-csrf-token', 'x-request-id'];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];
const EXPOSED = ['x-refresh-token', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'x-request-id'];

function isPreflight(req: FastifyRequest): boolean {
  return req.method === 'OPTIONS' && typeof req.headers['access-control-request-method'] === 'string';
}

/**
 * The surface that decides this request: the routed route's, or (preflight) its target's. For a
 * preflight the table holds the route objects themselves, read now: a group's own onRoute hook
 * stamps `config.surface` after the root's hook has seen the route.
 */
function surfaceOf(table: RouteTable, req: FastifyRequest): Surface | undefined {
  const url = req.routeOptions.url;
  if (url === undefined) return undefined; // no route matched: the 404 handler
  if (!isPreflight(req)) return req.routeOptions.config.surface;
  const wanted = String(req.headers['access-control-request-method']).trim().toUpperCase();
  return table.get(shapeOf(url))?.methods.get(wanted)?.config?.surface;
}

export async function registerCors(app: FastifyInstance, config: Config): Promise<void> {
  const dashboardOrigins = new Set([new URL(config.dashboardUrl).origin, ...config.allowedOrigins]);
  if (!config.production) {
    for (const o of ['http://localhost:5173', 'http://localhost:3000', 'http://127.0.0.1:5173']) dashboardOrigins.add(o);
  }
  const table = registerRouteTable(app);

  await app.register(cors, {
    hook: 'onRequest',
    delegator: (req: FastifyRequest, cb) => {
      const origin = req.headers.origin;
      const surface = surfaceOf(table, req);
      const allowed = origin !== undefined && (surface === 'public' || (surface === 'dashboard' && dashboardOrigins.has(origin)));
      cb(null, {
        origin: allowed ? origin : false,
        credentials: true,
        methods: METHODS,
        // null: @fastify/cors reflects Access-Control-Request-Headers (public routes only).
        allowedHeaders: surface === 'public' ? null : DASHBOARD_HEADERS,
        exposedHeaders: EXPOSED,
        maxAge: 600,
      } as unknown as Parameters<typeof cb>[1]);
    },
  });
}

/**
 * Gives every routed path an OPTIONS route (unless it has one), so a preflight is routed like
 * the request it announces (same decoding, same parameters) and @fastify/cors's hook sees it
 * on a real route. Call after every route group is registered.
 */
export function registerPreflightRoutes(app: FastifyInstance): void {
  for (const { url, methods } of [...routeTableOf(app).values()]) {
    if (methods.has('OPTIONS')) continue;
    app.options(url, { schema: { hide: true } }, async (req, reply) => {
      // Reached only when the hook granted nothing (or it was no preflight): as unrouted.
      if (!req.corsPreflightEnabled) return reply.callNotFound();
      return reply.code(204).send();
    });
  }
}
