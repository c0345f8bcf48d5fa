/** Builds the Fastify app: conventions (envelope, errors, CORS, ids, logs, docs) and routes. */
import { COMMIT_POSITION_HEADER } from './db/replicas.js';
import cookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { App } from './app.js';
import type { AppContext } from './context.js';
import { objectId } from './lib/ids.js';
import { sharedSchemaCompilers } from './lib/schema-compilers.js';
import { frameworkErrorOptions, registerErrorHandling } from './plugins/errors.js';
import { registerCors, registerPreflightRoutes } from './plugins/cors.js';
import { registerDocs } from './plugins/docs.js';
import { registerDashboardUi } from './plugins/dashboard-ui.js';
import { registerJsonBody } from './plugins/json-body.js';
import { registerInFlight } from './plugins/in-flight.js';
import { registerClientVersion } from './plugins/client-version.js';
import { drainBoundFor, registerBodyDrain } from './plugins/body-drain.js';
import { bindProjectParam, requestLogController, requestLoggerFactory } from './plugins/request-log.js';
import { isAppTraffic } from './modules/logs/buffer.js';
import metricsRoutes from './modules/metrics/routes/index.js';
import { commonRoutes, dashboardRoutes, publicRoutes, registerRouteGroup } from './routes.js';

/** Route files take it from src/app.ts; tests and benches from here, with buildApp. */
/** Trusts the nearest `hops` proxies: the client is the address the farthest of them saw. */
function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

export type { App } from './app.js';

const REQUEST_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** How long `app.close()` waits for handlers whose clients left (src/plugins/in-flight.ts). */
const HANDLER_DRAIN_MS = 10_000;

export async function buildApp(ctx: AppContext): Promise<App> {
  const countError = (code: string, status: number) => ctx.metrics.countError(code, status);
  const app = Fastify({
    // The errors Fastify answers before any route (a bad URL, an over-long path parameter,
    // unparseable HTTP) in the envelope too; path parameters up to MAX_PARAM_LENGTH.
    ...frameworkErrorOptions(countError),
    loggerInstance: ctx.log as FastifyBaseLogger,
    logController: requestLogController(ctx.config.logFormat),
    childLoggerFactory: requestLoggerFactory,
    bodyLimit: ctx.config.bodyLimit,
    // TRUST_PROXY; default: no proxy, X-Forwarded-For ignored. A hop count is given to Fastify
    // as the function it stands for: Fastify 5 takes a bare number without trusting any hop
    // (every client then had the proxy's address, and shared its rate limits).
    trustProxy: typeof ctx.config.trustProxy === 'number' ? trustHops(ctx.config.trustProxy) : ctx.config.trustProxy,
    requestIdHeader: false, // genReqId reads and validates x-request-id itself
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : objectId();
    },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, useDefaults: true, allErrors: false } },
    // one compiled copy of each route schema per process, whatever number of apps it builds
    schemaController: { compilersFactory: sharedSchemaCompilers },
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerErrorHandling(app, countError);
  registerInFlight(app, HANDLER_DRAIN_MS); // before any route: it counts every handler
  // An answer sent before the body was read (413 over BODY_LIMIT...): the rest is read, within a bound.
  registerBodyDrain(app, drainBoundFor(ctx.config.bodyLimit));
  // Under the routed pattern (`/api/data/:collectionName`), never the raw URL: bounded series, no ids.
  // The hooks every request passes are callback style, not async: a promise per hook per request costs.
  // The project's request log (docs/dashboard.md): requests to the API-key routes whose key named
  // a project (isAppTraffic: by the routed route's group, never the URL), under the same routed
  // pattern; a row pushed to the node's buffer, nothing awaited.
  // The same requests are counted per project, route group, status class and hour for the
  // usage history (src/modules/usage/counters.ts): an increment in memory, written in batches.
  const requestLog = ctx.config.requestLog.enabled ? ctx.requestLog : null;
  const usage = ctx.config.usage.counters ? ctx.usage : null;
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions;
    const ms = reply.elapsedTime;
    ctx.metrics.observeRequest(req.method, route.url, reply.statusCode, ms / 1000);
    const projectId = req.logProjectId;
    if ((requestLog || usage) && projectId !== undefined && route.url !== undefined && isAppTraffic(route.config)) {
      requestLog?.record(projectId, requestLog.now() - ms, req.method, route.url, reply.statusCode, ms, req.errorCode ?? null, req.userId ?? null);
      usage?.request(projectId, route.config.auth, reply.statusCode);
    }
    done();
  });
  registerJsonBody(app);
  registerClientVersion(app); // @plinth/client newer than this server: a clear 400 (docs/client.md)
  // What the auth groups (src/route-groups.ts), the userAuth preconditions and the request log
  // set on a request, declared once so every request object has the same shape from the start.
  for (const field of ['project', 'keyKind', 'operator', 'userId', 'usersSchema', 'logProjectId', 'errorCode'] as const) app.decorateRequest(field, undefined);
  app.addHook('preHandler', bindProjectParam);
  const replicas = ctx.db.replicas;
  app.addHook('onSend', (req, reply, payload, done) => {
    reply.header('x-request-id', req.id);
    // With read replicas: after a write, where the project's WAL had reached (docs/scaling.md);
    // sent back as Plinth-Commit-Position, the next read on any node waits for it or uses the primary.
    if (replicas && req.project && req.method !== 'GET' && req.method !== 'HEAD') {
      const position = replicas.positionOf(req.project.id);
      if (position) reply.header(COMMIT_POSITION_HEADER, position);
    }
    done(null, payload);
  });
  await app.register(cookie);
  await registerCors(app, ctx.config);
  await registerDocs(app, ctx.config);
  await registerDashboardUi(app, ctx.config);

  await registerRouteGroup(app, ctx, 'public', commonRoutes);
  if (ctx.config.routes !== 'dashboard') await registerRouteGroup(app, ctx, 'public', publicRoutes);
  if (ctx.config.routes !== 'public') await registerRouteGroup(app, ctx, 'dashboard', dashboardRoutes);
  await metricsRoutes(app, ctx); // in no route group: no CORS surface
  registerPreflightRoutes(app);
  await app.ready();
  return app;
}
