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
 * Preflights are answered in the hook, before authentication (a browser sends no credentials
 * with them). So every routed path also gets an OPTIONS route (registerPreflightRoutes), and a
 * preflight takes the surface of the route its Access-Control-Request-Method names at that
 * routed path. A path no route matches (even after decoding) gets no grant and a 404.
 *
 * The hook is attached to each route when it is registered (onRoute), so it knows its route
 * without asking per request: Fastify's `req.routeOptions` builds a new object on every read,
 * and @fastify/cors (used before) built and spread two option objects per request in its
 * per-request mode. Those allocations were promoted to V8's old space and forced a full garbage
 * collection every 2–4 s under load, a ~100 ms stall of every request in flight (docs/data.md,
 * "Benchmarks"). The headers are the ones that plugin sent.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import type { Config } from '../config.js';
import { registerRouteTable, routeTableOf, shapeOf, type RouteTable } from './route-table.js';

export type Surface = 'public' | 'dashboard';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which CORS policy (and route group) the route belongs to. */
    surface?: Surface;
    /** The route's authentication group (src/route-groups.ts). */
    auth?: string;
    /** Open below aal2 where a second factor is required (enrolment, step-up): src/modules/mfa/policy.ts, operators/auth.ts. */
    belowAal2?: boolean;
  }
  interface FastifyRequest {
    /** Set by the CORS hook when it granted this preflight. */
    corsPreflightEnabled: boolean;
  }
}

const DASHBOARD_HEADERS = ['x-api-key', 'authorization', 'content-type', 'x-refresh-token', 'x-refresh-token-mode', 'user-agent', 'x-csrf-token', 'x-request-id'].join(', ');
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'].join(', ');
const EXPOSED = ['x-refresh-token', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'x-request-id', 'Idempotent-Replayed', 'Plinth-Commit-Position', 'ETag'].join(', ');
const MAX_AGE = '600';

/** Adds `field` to the Vary header unless it (or `*`) is there already. */
export function appendVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  if (current === undefined) {
    reply.header('vary', field);
    return;
  }
  const text = Array.isArray(current) ? current.join(', ') : String(current);
  const listed = text.split(',').map((v) => v.trim().toLowerCase());
  if (!listed.includes('*') && !listed.includes(field.toLowerCase())) reply.header('vary', `${text}, ${field}`);
}

/** Which surfaces grant this origin: any origin on public routes, the dashboard origins on dashboard routes. */
function granted(surface: Surface, origin: string, dashboardOrigins: Set<string>): boolean {
  return surface === 'public' || (surface === 'dashboard' && dashboardOrigins.has(origin));
}

/**
 * The CORS hook of one route. Its surface is read per request, not when the route is added:
 * the route group's own onRoute hook stamps `config.surface` after this one has seen the route.
 */
function corsHook(route: RouteOptions, table: RouteTable, dashboardOrigins: Set<string>): onRequestHookHandler {
  const shape = shapeOf(route.url);
  const surfaceOf = (req: FastifyRequest): Surface | undefined => {
    const announced = req.method === 'OPTIONS' ? req.headers['access-control-request-method'] : undefined;
    if (typeof announced !== 'string') return route.config?.surface;
    // A preflight: the policy of the route it announces, at this routed path.
    return table.get(shape)?.methods.get(announced.trim().toUpperCase())?.config?.surface;
  };
  return function cors(req, reply, done) {
    const surface = surfaceOf(req);
    if (surface === undefined) return done(); // no CORS surface (docs, metrics, an unserved method)
    appendVary(reply, 'Origin'); // the answer depends on the caller's origin
    const origin = req.headers.origin;
    if (origin === undefined || !granted(surface, origin, dashboardOrigins)) return done();
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-allow-credentials', 'true');
    reply.header('access-control-expose-headers', EXPOSED);
    if (req.method !== 'OPTIONS') return done();
    if (req.headers['access-control-request-method'] === undefined) {
      reply.status(400).type('text/plain').send('Invalid Preflight Request');
      return;
    }
    req.corsPreflightEnabled = true;
    reply.header('access-control-allow-methods', METHODS);
    if (surface === 'public') {
      // Public preflights reflect what the app asks for (the SDK's `headers` option).
      appendVary(reply, 'Access-Control-Request-Headers');
      const asked = req.headers['access-control-request-headers'];
      if (asked !== undefined) reply.header('access-control-allow-headers', asked);
    } else {
      reply.header('access-control-allow-headers', DASHBOARD_HEADERS);
    }
    reply.header('access-control-max-age', MAX_AGE);
    reply.code(204).header('content-length', '0').send();
  };
}

export async function registerCors(app: FastifyInstance, config: Config): Promise<void> {
  const dashboardOrigins = new Set([new URL(config.dashboardUrl).origin, ...config.allowedOrigins]);
  if (!config.production) {
    for (const o of ['http://localhost:5173', 'http://localhost:3000', 'http://127.0.0.1:5173']) dashboardOrigins.add(o);
  }
  const table = registerRouteTable(app);
  app.decorateRequest('corsPreflightEnabled', false);
  app.addHook('onRoute', (route) => {
    // First of the route's own hooks (they run after the app-wide ones, cookies and the like).
    route.onRequest = [corsHook(route, table, dashboardOrigins), ...[route.onRequest ?? []].flat()];
  });
}

/**
 * Gives every routed path an OPTIONS route (unless it has one), so a preflight is routed like
 * the request it announces (same decoding, same parameters) and the CORS hook sees it on a
 * real route. Call after every route group is registered.
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
