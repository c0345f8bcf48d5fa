/**
 * The composition root: turns a Config into a running AppContext (database, migrations, bus,
 * caches, limiter, queue). `npm start`, `plinth worker` and the test harness all come here.
 */
import type { DestinationStream } from 'pino';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { createBus } from './db/bus.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { migrate, type MigrateWarn } from './db/migrate.js';
import { createDb } from './db/pool.js';
import { parseLsn } from './db/replicas.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createLogger } from './lib/logger.js';
import { setPasswordHashConcurrency } from './lib/passwords.js';
import { cached, createMetrics } from './lib/metrics.js';
import { createRateLimiter, Limits } from './lib/rate-limiter.js';
import { checkEncryptionKey } from './modules/projects/key-check.js';
import { ProjectCache } from './modules/projects/cache.js';
import { createJobQueue } from './worker/queue.js';
import { jobQueueStats } from './worker/stats.js';
import { createMailer } from './modules/mail/mailer.js';
import { registerStorageHooks } from './modules/storage/hooks.js';
import { registerBackupHooks } from './modules/backup/removal.js';
import { LRUCache } from 'lru-cache';
import { CollectionCache } from './modules/collections/cache.js';
import { reconcileAllIndexes } from './modules/collections/index-queries.js';
import { ChangeFeed } from './modules/realtime/feed.js';
import { readableChanges } from './modules/realtime/queries.js';
import { ticketKey } from './modules/realtime/ticket.js';
import { createQuotaLeases } from './modules/data/quota.js';
import { createMailGroups } from './modules/mail/group-commit.js';
import { createOAuthServers } from './modules/social/providers.js';
import { OidcDiscovery } from './modules/social/oidc-discovery.js';
import { createPlatformDriver } from './modules/storage/backends.js';
import { createUploadBatchers } from './modules/storage/batching.js';
import { ResumableUploads } from './modules/storage/resumable/server.js';
import { ImageRenderer } from './modules/storage/images/renderer.js';
import { RequestLog } from './modules/logs/buffer.js';
import { registerRequestLogHooks } from './modules/logs/cleanup.js';
import { UsageCounters } from './modules/usage/counters.js';
import { registerUsageHooks } from './modules/usage/sample.js';
import { SandboxPool } from './modules/functions/sandbox/pool.js';
import { FunctionRegistry } from './modules/functions/registry.js';
import { InvocationLog } from './modules/functions/invocation-log.js';
import { registerBeforeHooks } from './modules/functions/before-hooks.js';
import { SANDBOX_SCRIPT } from './paths.js';

/** The context's fields that the domains build from the rest of it (set right after). */
type DomainState = 'mailer' | 'collections' | 'storage' | 'quotaLeases' | 'mailGroups' | 'oauthServers' | 'oidc' | 'realtime' | 'requestLog' | 'usage' | 'functions';

export interface BootOptions {
  clock?: Clock;
  logStream?: DestinationStream;
  /** Skip migrations (the test harness migrates a template database once). */
  skipMigrations?: boolean;
}

export interface Booted {
  ctx: AppContext;
  embedded?: EmbeddedDatabase;
  close(): Promise<void>;
}

/** Installs graphile-worker's schema and ours, then the policies and grants in sql/ (one lock). */
export async function prepareDatabase(url: string, log: (m: string) => void = () => {}, warn?: MigrateWarn): Promise<void> {
  await migrate(url, log, undefined, warn);
}

export async function boot(config: Config, opts: BootOptions = {}): Promise<Booted> {
  const log = createLogger(config.logLevel, opts.logStream, config.logFormat);
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres(config.dataDir, 'plinth', { log: (m) => log.info(m) });
    url = embedded.url;
  }
  // Sessions (migrations' advisory lock, the bus's LISTEN, graphile-worker) go to PostgreSQL
  // itself; request queries to DATABASE_URL, which may be a transaction pooler.
  const directUrl = (!embedded && config.databaseDirectUrl) || url;
  if (!opts.skipMigrations) await prepareDatabase(directUrl, (m) => log.debug(m), (detail, m) => log.warn(detail, m));
  const db = createDb(url, { tenant: 20, admin: 8 + (config.runWorker ? config.workerConcurrency : 0) }, config.tenantDb, {
    connectTimeoutMs: config.dbConnectTimeoutMs,
    directUrl,
    preparedStatements: config.databasePreparedStatements === 'auto' ? undefined : config.databasePreparedStatements === 'on',
    readUrls: config.databaseReadUrls,
    replicas: config.replicas,
    onAvailabilityChange: ({ reachable, ...detail }) =>
      reachable ? log.info(detail, 'database reachable again') : log.warn(detail, 'database unreachable: requests answer 503 until it is back'),
  });
  await checkEncryptionKey(db.admin, config.encryptionKey).catch(async (err) => {
    await db.close();
    await embedded?.stop().catch(() => {});
    throw err;
  });
  if (!opts.skipMigrations) {
    const rebuilt = await reconcileAllIndexes(db.admin, (collectionId, err) => log.warn({ err, collectionId }, 'collection indexes left as they were'));
    if (rebuilt) log.info({ rebuilt }, 'collection indexes brought in line with this version');
  }
  const bus = await createBus(directUrl, db.pool, {
    onStateChange: (listening, err) =>
      listening ? log.info('cache-invalidation listener reconnected') : log.warn({ err }, 'cache-invalidation listener lost; caches bypassed until it reconnects'),
  });
  const replicas = db.replicas;
  if (replicas) {
    // Read-your-writes across nodes: a write here keeps its project's reads on the primary there.
    replicas.announce = (id, position) => bus.announce({ type: 'project_wrote', id, position });
    bus.subscribe((e) => {
      if (e.type === 'project_wrote') replicas.mark(e.id, parseLsn(e.position));
    });
  }
  const clock = opts.clock ?? systemClock;
  const limiter = createRateLimiter(config.redisUrl, {
    now: () => clock.now().getTime(),
    commandTimeoutMs: config.redisCommandTimeoutMs,
    onChange: ({ shared, ...detail }) =>
      shared
        ? log.info(detail, 'Redis reachable again: rate limits shared by all nodes again')
        : log.warn(detail, 'Redis unreachable: rate limits counted per node until it is back'),
  });
  await limiter.ready?.(config.redisCommandTimeoutMs);
  setPasswordHashConcurrency(config.passwordHashConcurrency);
  const ctx = {
    config,
    db,
    bus,
    clock,
    log,
    limiter,
    limits: new Limits(limiter, config.rateLimitScale),
    projects: new ProjectCache(db.admin, config.encryptionKey, bus),
    queue: createJobQueue(db.admin),
    hooks: { projectDeleting: [], closing: [] },
    // The queue gauges cost one query per 5 s however many scrapers ask (src/worker/stats.ts).
    metrics: createMetrics({ pools: () => db.usage(), jobs: cached(() => jobQueueStats(db.pool), 5000), replicas: () => db.replicas?.stats() ?? null }),
    lifecycle: { draining: false },
  } satisfies Omit<AppContext, DomainState> as unknown as AppContext;
  // The domains' per-node state: built from the context above, so each may use it.
  ctx.mailer = createMailer(ctx);
  ctx.collections = new CollectionCache(ctx);
  ctx.storage = { platform: createPlatformDriver(config), uploads: createUploadBatchers(ctx), sweptHours: new LRUCache({ max: 48 }), resumable: new ResumableUploads(ctx),
    images: new ImageRenderer(config.storage.images),
    rendering: new Map(),
  };
  ctx.quotaLeases = createQuotaLeases(ctx);
  ctx.mailGroups = createMailGroups(ctx);
  ctx.oauthServers = createOAuthServers(config);
  ctx.oidc = new OidcDiscovery({ allowPrivate: config.oauth.allowPrivateIssuers, timeoutMs: config.oauth.httpTimeoutMs });
  ctx.realtime = {
    feed: new ChangeFeed({
      db: db.admin,
      pollMs: config.realtime.pollMs,
      heartbeatMs: config.realtime.heartbeatMs,
      log,
      collection: (p, name) => ctx.collections.get(p, name),
      readable: (scope, collectionId, readSql, rows) =>
        db.read({ ...scope, keyKind: 'publishable' }, (tx) => readableChanges(tx, collectionId, readSql, rows)),
    }),
    ticketKey: ticketKey(config.encryptionKey),
  };
  ctx.hooks.closing.push(() => ctx.realtime.feed.stop());
  // A removed member's console streams of the project end on every node (docs/teams.md).
  bus.subscribe((e) => {
    if (e.type === 'member_removed') ctx.realtime.feed.closeOperatorStreams(e.id, e.operatorId);
    if (e.type === 'operator_sessions_ended' && (e.sessions === null || Array.isArray(e.sessions))) ctx.realtime.feed.closeOperatorSessionStreams(e.id, e.sessions, e.except);
  });
  ctx.requestLog = new RequestLog({
    db: db.admin,
    log,
    registry: ctx.metrics.registry,
    flushMs: config.requestLog.flushMs,
    bufferRows: config.requestLog.bufferRows,
    // The wall clock without a Date per request; a test's clock when it has one.
    now: clock === systemClock ? Date.now : () => clock.now().getTime(),
  });
  ctx.hooks.closing.push(() => ctx.requestLog.close());
  ctx.usage = new UsageCounters({
    db: db.admin,
    log,
    registry: ctx.metrics.registry,
    enabled: config.usage.counters,
    flushMs: config.usage.flushMs,
    now: clock === systemClock ? Date.now : () => clock.now().getTime(),
    openStreams: () => ctx.realtime.feed.openStreams(),
  });
  ctx.hooks.closing.push(() => ctx.usage.close());
  ctx.functions = {
    pool: new SandboxPool({
      script: SANDBOX_SCRIPT,
      size: config.functions.sandboxes,
      perProjectConcurrency: config.functions.projectConcurrency,
      invocationsPerSandbox: config.functions.invocationsPerSandbox,
      perProjectQueue: config.functions.projectQueue,
      memoryMb: config.functions.memoryMb,
      // A sandbox holds up to its units' memory plus its own: replaced when well past that.
      processRssMb: 256 + 4 * config.functions.memoryMb,
      heapMb: 128,
      graceMs: 1000,
      onEvent: (e) => (e.type === 'exited' && e.signal === null && e.code === 0 ? undefined : log.warn(e, 'function sandbox ' + e.type)),
    }),
    registry: new FunctionRegistry({ bus, db, encryptionKey: config.encryptionKey }),
    log: new InvocationLog(db.admin, log),
  };
  registerBeforeHooks(ctx);
  ctx.hooks.closing.push(async () => {
    await ctx.functions.pool.close();
    await ctx.functions.log.flush();
  });
  registerStorageHooks(ctx);
  registerBackupHooks(ctx);
  registerRequestLogHooks(ctx);
  registerUsageHooks(ctx);
  return {
    ctx,
    embedded,
    async close() {
      for (const hook of ctx.hooks.closing) await hook().catch((err) => log.warn({ err }, 'shutdown hook failed'));
      await bus.close();
      await limiter.close();
      await db.close();
      await embedded?.stop().catch(() => {});
    },
  };
}
