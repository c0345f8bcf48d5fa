/**
 * The composition root's product: everything a route or a worker task needs, built once at
 * start-up (src/boot.ts) or by the test harness. Domains take what they need from here.
 */
import type { ChangeFeed } from './modules/realtime/feed.js';
import type { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db, Tx } from './db/pool.js';
import type { Bus } from './db/bus.js';
import type { Clock } from './lib/clock.js';
import type { Metrics } from './lib/metrics.js';
import type { Limits, RateLimiter } from './lib/rate-limiter.js';
import type { QuotaLeases } from './lib/quota-leases.js';
import type { CollectionCache } from './modules/collections/cache.js';
import type { MailGroups } from './modules/mail/group-types.js';
import type { ProjectCache } from './modules/projects/cache.js';
import type { OAuthServers } from './modules/social/provider-names.js';
import type { OidcDiscovery } from './modules/social/oidc-discovery.js';
import type { UploadBatchers } from './modules/storage/batching.js';
import type { StorageDriver } from './modules/storage/drivers/types.js';
import type { ResumableUploadsHandle } from './modules/storage/resumable/handle.js';
import type { ImageRenderer } from './modules/storage/images/renderer.js';
import type { JobQueue } from './worker/queue.js';
import type { RequestLog } from './modules/logs/buffer.js';
import type { UsageCounters } from './modules/usage/counters.js';
import type { SandboxPool } from './modules/functions/sandbox/pool.js';
import type { FunctionRegistry } from './modules/functions/registry.js';
import type { InvocationLog } from './modules/functions/invocation-log.js';

export interface Hooks {
  /**
   * Run just before a project's rows are deleted (e.g. remove its stored files while the
   * bucket settings still exist). A failing hook is logged and does not stop the delete.
   */
  projectDeleting: Array<(projectId: string) => Promise<void>>;
  /** Run at shutdown, before the database connections close (e.g. give back quota leases). */
  closing: Array<() => Promise<void>>;
  /**
   * The project's before-hooks on a collection write (src/modules/functions/before-hooks.ts),
   * run by every write path before its transaction opens: the incoming data as the hooks left
   * it, or their refusal thrown. Unset: no functions on this node.
   */
  beforeWrite?: BeforeWrite;
}

/** A write as before-hooks see it; `data` is the create's document or the update's patch. */
export interface BeforeWriteInput {
  projectId: string;
  collection: string;
  event: 'create' | 'update' | 'delete';
  id?: string;
  data?: unknown;
  /** Who writes: the key, the end user (and their token's claims), and how deep in hooks' own writes this one is. */
  writer: { secret: boolean; userId: string | null; hookDepth?: number; claims?: string | null };
}

export type BeforeWrite = (input: BeforeWriteInput) => Promise<unknown>;

/** A message sent by the platform (operator mails, projectId null) or for a project (auth OTPs). */
export interface SystemMail {
  projectId: string | null;
  to: string;
  subject: string;
  html?: string;
  text?: string;
  /** What the mail is for, e.g. 'auth.verify-email', 'operator.otp' (kept in logs). */
  tag: string;
}

/**
 * The one sending path for mails the service itself sends, through the same pipeline as
 * /api/mail/send (the dev outbox when no provider is configured). Not charged to the
 * project's monthly quota. Implemented by src/modules/mail/mailer.ts.
 */
export interface Mailer {
  /**
   * Queues a system mail. With `tx` (a tenant transaction in the mail's project) it is queued
   * in that transaction, so it commits with the caller's writes or not at all.
   */
  sendSystemMail(mail: SystemMail, tx?: Tx): Promise<void>;
}

/** Where the process is in its life: read by /readyz, set by the shutdown in src/main.ts. */
export interface Lifecycle {
  /** Shutting down: /readyz answers 503 so load balancers stop sending traffic here. */
  draining: boolean;
}

/** Storage's per-node state. */
export interface StorageNode {
  /** The platform's own store (STORAGE_DRIVER). */
  platform: StorageDriver;
  /** Group commits of upload requests and confirmations (src/modules/storage/batching.ts). */
  uploads: UploadBatchers;
  /** Hours whose stale-upload sweep this node has already scheduled (one job per hour). */
  sweptHours: LRUCache<string, true>;
  /** The node's tus server (src/modules/storage/resumable/server.ts); no upload state of its own. */
  resumable: ResumableUploadsHandle;
  /** Image transformations: bounded renders per node (src/modules/storage/images/renderer.ts). */
  images: ImageRenderer;
  /** Derivatives being rendered on this node, by store key (one rendering per key at a time). */
  rendering: Map<string, Promise<Buffer>>;
}

/**
 * Everything a node holds, built once by src/boot.ts (or the test harness through it): shared
 * services first, then the domains' per-node state (caches, group commits, allowances).
 */
export interface AppContext {
  config: Config;
  db: Db;
  bus: Bus;
  clock: Clock;
  log: Logger;
  limiter: RateLimiter;
  limits: Limits;
  projects: ProjectCache;
  queue: JobQueue;
  hooks: Hooks;
  mailer: Mailer;
  metrics: Metrics;
  lifecycle: Lifecycle;
  /** Collection definitions, evicted on every node by `project_changed` on the bus. */
  collections: CollectionCache;
  storage: StorageNode;
  /** Database-bytes allowances taken ahead of writes (given back at shutdown). */
  quotaLeases: QuotaLeases;
  /** Group commit of queued mail per project and month (src/modules/mail/group-commit.ts). */
  mailGroups: MailGroups;
  /** OAuth providers' authorization-server metadata (stable objects: JWKS caching keys). */
  oauthServers: OAuthServers;
  /** Projects' OpenID Connect issuers: discovered metadata (JWKS cache keys) and the guarded fetch. */
  oidc: OidcDiscovery;
  /** The node's reader of the change stream and the key of realtime tickets (src/modules/realtime). */
  realtime: RealtimeNode;
  /** The node's batched writer of the per-project request log (src/modules/logs/buffer.ts). */
  requestLog: RequestLog;
  /** The node's usage counters per project and hour, written in batches (src/modules/usage/counters.ts). */
  usage: UsageCounters;
  /** Projects' functions on this node: the sandbox pool, the cached definitions, the invocation log. */
  functions: FunctionsNode;
}

export interface FunctionsNode {
  pool: SandboxPool;
  registry: FunctionRegistry;
  log: InvocationLog;
}

export interface RealtimeNode {
  feed: ChangeFeed;
  ticketKey: Uint8Array;
}
