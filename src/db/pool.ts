/**
 * Connection pools, Kysely instances and tenant-scoped database access.
 *
 * Two pools. `admin` connects as the database owner: platform tables (operators, projects,
 * the job queue) and migrations. The tenant pool's connections always run as one of the two
 * members of the `plinth_api` role (`roleFor`: publishable-key access or full project access),
 * none with BYPASSRLS: every query on them is subject to the row-level-security policies in
 * sql/, which read the tenant scope (project, user, key kind) from the `plinth.*` settings.
 *
 * A tenant connection is only ever handed to code through `tenant()` or `read()`, which first
 * make its settings equal to the caller's scope. The scope a connection carries is remembered,
 * so a request whose scope matches skips that round trip: a single-statement read costs one
 * round trip, like hand-written SQL. Any error forgets the remembered scope (it is set again
 * before the next use), and a connection without a scope sees no tenant rows at all.
 *
 * Noisy neighbours: every tenant call first enters its project's lane of the ProjectGate
 * (gate.ts), so one project holds at most `projectConcurrency` connections; and
 * publishable-key scopes run with a tighter statement_timeout (they are anyone's browser).
 * A tenant call never opens another tenant call of the same project inside it: the inner one
 * would need a second slot of the lane the outer one holds (the batch settles its quota inside
 * its own transaction for that reason, data/quota.ts).
 *
 * No AsyncLocalStorage: each connection has its own Kysely instance, handed to the caller. Once
 * any AsyncLocalStorage holds a value, Node 20 runs a hook on every promise of the process
 * (~0.5 µs each, and a request awaits a few dozen; docs/data.md, Benchmarks 2026-11-25).
 */
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { isObjectId } from '../lib/ids.js';
import { Availability, type AvailabilityChange } from '../lib/availability.js';
import { fromDatabase, isDatabaseUnavailable } from './errors.js';
import { ProjectGate } from './gate.js';
import type { Database } from '../database.js';
import type { PoolUsage } from '../lib/metrics.js';

export type KeyKind = 'secret' | 'publishable' | 'operator' | 'system';

export interface TenantScope {
  projectId: string;
  userId?: string | null;
  keyKind: KeyKind;
}

export type Tx = Kysely<Database>;

export interface Db {
  admin: Kysely<Database>;
  /** The owner pool (graphile-worker, the bus). */
  pool: pg.Pool;
  /** A transaction in the tenant scope: use for writes and anything that must be atomic. */
  tenant<T>(scope: TenantScope, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Statements in the tenant scope without a transaction (each autocommits): for reads. */
  read<T>(scope: TenantScope, fn: (db: Tx) => Promise<T>): Promise<T>;
  /** A read-only REPEATABLE READ transaction in the tenant scope: one consistent view across many reads (exports). */
  snapshot<T>(scope: TenantScope, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Whether the database answered the last time this process tried. */
  readonly reachable: boolean;
  /** Connections of each pool now: open, idle, and callers waiting for one (metrics). */
  usage(): Record<'tenant' | 'admin', PoolUsage>;
  close(): Promise<void>;
}

// bigint counters fit in a double; parse them as numbers rather than strings.
pg.types.setTypeParser(20, (v) => Number(v));

const KEY_KINDS = new Set<KeyKind>(['secret', 'publishable', 'operator', 'system']);
const SCOPE = Symbol('plinth.scope');
const PREPARED = Symbol('plinth.prepared');
const KYSELY = Symbol('plinth.kysely');
const HELD = Symbol('plinth.held');
type ScopedClient = pg.PoolClient & {
  [SCOPE]?: string;
  [PREPARED]?: Map<string, string>;
  /** This connection's own Kysely instance (kyselyOf). */
  [KYSELY]?: Kysely<Database>;
  /** Whether a tenant()/read() call holds the connection now. */
  [HELD]?: boolean;
};

/**
 * The role a scope runs as (migrations/011_api_key_roles.sql): both are members of plinth_api
 * (its grants, tenant isolation); the documents policies differ by role.
 */
const roleFor = (keyKind: KeyKind) => (keyKind === 'publishable' ? 'plinth_api_publishable' : 'plinth_api_full');

/** Distinct statements kept prepared per connection; rarer shapes beyond it are parsed each time. */
const MAX_PREPARED = 256;

/**
 * Runs a tenant query as a named prepared statement (one per distinct SQL text and
 * connection), so PostgreSQL parses and plans the hot queries once instead of every request.
 */
function preparedQuery(client: ScopedClient) {
  const names = (client[PREPARED] ??= new Map());
  return (text: string, values?: unknown[]) => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED) {
      name = `p${names.size}`;
      names.set(text, name);
    }
    return client.query(name ? { name, text, values } : { text, values });
  };
}

/**
 * The Kysely instance tenant code gets for this connection: every query runs on it, as a
 * prepared statement. A handle kept past the end of its tenant()/read() call refuses to run
 * while the connection is back in the pool (it holds no scope then). Code must not keep one:
 * once another call holds the connection, the handle would run in that call's scope.
 */
function kyselyOf(client: ScopedClient): Kysely<Database> {
  if (client[KYSELY]) return client[KYSELY];
  const connection = { query: preparedQuery(client) as unknown as PostgresPoolClient['query'], release: () => {} };
  const pool: PostgresPool = {
    async connect(): Promise<PostgresPoolClient> {
      if (!client[HELD]) throw new Error('tenant queries must run inside db.tenant() or db.read()');
      return connection;
    },
    async end() {},
  };
  return (client[KYSELY] = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }));
}

/** The scope as a settings statement. Values are inlined only after strict validation. */
export function scopeStatement(scope: TenantScope): string {
  const userId = scope.userId ?? '';
  if (!isObjectId(scope.projectId)) throw new Error('tenant scope needs a valid project id');
  if (userId !== '' && !isObjectId(userId)) throw new Error('tenant scope has an invalid user id');
  if (!KEY_KINDS.has(scope.keyKind)) throw new Error('tenant scope has an invalid key kind');
  return (
    `SELECT set_config('plinth.project_id', '${scope.projectId}', false), ` +
    `set_config('plinth.user_id', '${userId}', false), ` +
    `set_config('plinth.key_kind', '${scope.keyKind}', false)`
  );
}

/**
 * The statement timeout a scope runs with: publishable-key work gets `publishableMs`; any other
 * scope the server's own setting (RESET). Part of the remembered scope, so it costs nothing
 * while the scope stays.
 */
function timeoutStatement(scope: TenantScope, publishableMs: number): string {
  return scope.keyKind === 'publishable' ? `SET statement_timeout = ${Math.trunc(publishableMs)}` : 'RESET statement_timeout';
}

/** Makes the connection carry `scope`, in the same round trip as `then` (e.g. BEGIN) if given. */
async function enterScope(client: ScopedClient, scope: TenantScope, publishableMs: number, then?: string): Promise<void> {
  const statement = `${timeoutStatement(scope, publishableMs)}; ${scopeStatement(scope)}`;
  if (client[SCOPE] === statement) {
    if (then) await client.query(then);
    return;
  }
  client[SCOPE] = undefined;
  // The role goes with every scope change, first in the batch. Batched with BEGIN it belongs to
  // that transaction and a rollback undoes it (back to the owner on a fresh connection), so it
  // must never be assumed to persist: every error forgets the scope (withClient), and the
  // next use sends role and settings again. Tested in test/db/tenant-isolation.test.ts.
  await client.query(`SET ROLE ${roleFor(scope.keyKind)}; ${then ? `${then}; ` : ''}${statement}`);
  client[SCOPE] = statement;
}

export interface PoolSizes {
  /** Tenant (request) connections. */
  tenant: number;
  /** Owner connections: platform queries plus the job worker's concurrency when it runs here. */
  admin: number;
}

/** Per-project bounds of tenant work (PROJECT_DB_CONCURRENCY etc., src/config.ts). */
export interface TenantLimits {
  /** Tenant calls of one project holding a connection at once. */
  projectConcurrency: number;
  /** How long a call beyond that waits for a slot before 429 project_busy. */
  queueWaitMs: number;
  /** statement_timeout of publishable-key scopes. */
  publishableStatementTimeoutMs: number;
}

export const DEFAULT_TENANT_LIMITS: TenantLimits = { projectConcurrency: 10, queueWaitMs: 1000, publishableStatementTimeoutMs: 1500 };

/**
 * `pool.end()` resolves once it has *asked* its connections to close, not when they have. A
 * database stopped right after (the embedded one at shutdown) would then cut them off, and
 * their error handlers (graphile-worker's among them) would log a FATAL per connection.
 */
function trackConnections(pools: pg.Pool[]) {
  const clients = new Set<pg.PoolClient>();
  for (const p of pools) {
    p.on('connect', (c) => {
      clients.add(c);
      c.once('end', () => clients.delete(c));
    });
  }
  return {
    allClosed(timeoutMs = 2000): Promise<void> {
      const ends = [...clients].map((c) => new Promise<void>((resolve) => c.once('end', () => resolve())));
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
      return Promise.race([Promise.all(ends).then(() => {}), timeout]);
    },
  };
}

/**
 * Tags every error the pool's connections raise as the database's (errors.ts: so a socket
 * error is told apart from S3's or a provider's) and reports to `availability` whether the
 * database answered: a failed connect or a broken connection says it is away, a new
 * connection or an answered query says it is back.
 */
function watchPool(p: pg.Pool, availability: Availability): void {
  const failed = (err: unknown) => {
    fromDatabase(err);
    if (isDatabaseUnavailable(err)) availability.failed(err);
    return err;
  };
  type Callback = (err: Error | undefined, client?: pg.PoolClient, done?: (release?: unknown) => void) => void;
  const connect = p.connect.bind(p) as (cb?: Callback) => Promise<pg.PoolClient> | undefined;
  // Both forms: the promise one (ours, Kysely) and the callback one (pool.query, graphile-worker).
  (p as { connect: unknown }).connect = (cb?: Callback) =>
    cb ? connect((err, client, done) => cb(err && (failed(err) as Error), client, done)) : connect()!.catch((err) => Promise.reject(failed(err)));
  p.on('connect', (client) => {
    availability.succeeded();
    // pg-pool listens for errors only while a client is idle. One checked out when the server
    // goes away would emit an 'error' nobody hears, which crashes the process; the failure
    // reaches its user through the query's rejection anyway, and pg-pool drops the client.
    client.on('error', () => {});
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const cb = args.at(-1);
      if (typeof cb === 'function') {
        // The callback form (pool.query uses it): tag its error the same way.
        args[args.length - 1] = (err: unknown, ...rest: unknown[]) => (err ? cb(failed(err), ...rest) : (availability.succeeded(), cb(err, ...rest)));
      }
      const result = query(...args);
      // The callback and submittable forms return no promise: nothing more to wrap.
      if (!(result instanceof Promise)) return result;
      return result.then(
        (value) => {
          availability.succeeded();
          return value;
        },
        (err) => Promise.reject(failed(err)),
      );
    };
  });
}

export interface DbOptions {
  /** How long getting a connection may take (a new one, or a free one from a busy pool). */
  connectTimeoutMs?: number;
  /** Told once when the database becomes unreachable and once when it is back (for the log). */
  onAvailabilityChange?: (change: AvailabilityChange) => void;
}

export function createDb(
  databaseUrl: string,
  sizes: PoolSizes = { tenant: 20, admin: 10 },
  limits: TenantLimits = DEFAULT_TENANT_LIMITS,
  options: DbOptions = {},
): Db {
  const connectionTimeoutMillis = options.connectTimeoutMs ?? 5000;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: sizes.admin, idleTimeoutMillis: 30_000, connectionTimeoutMillis });
  const tenantPool = new pg.Pool({ connectionString: databaseUrl, max: sizes.tenant, idleTimeoutMillis: 30_000, connectionTimeoutMillis });
  const availability = new Availability(options.onAvailabilityChange);
  for (const p of [pool, tenantPool]) {
    p.on('error', () => {}); // idle-client errors surface on next use
    watchPool(p, availability);
  }
  const open = trackConnections([pool, tenantPool]);
  const admin = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });

  const gate = new ProjectGate(limits.projectConcurrency, limits.queueWaitMs);

  async function withClient<T>(projectId: string, fn: (client: ScopedClient) => Promise<T>): Promise<T> {
    const leave = await gate.enter(projectId);
    try {
      return await connected(fn);
    } finally {
      leave();
    }
  }

  async function connected<T>(fn: (client: ScopedClient) => Promise<T>): Promise<T> {
    const client: ScopedClient = await tenantPool.connect();
    client[HELD] = true;
    try {
      return await fn(client);
    } catch (err) {
      client[SCOPE] = undefined; // set it again before the next use, whatever went wrong
      throw err;
    } finally {
      client[HELD] = false;
      client.release(); // pg-pool discards a connection that broke
    }
  }

  const transaction = (begin: string) => <T>(scope: TenantScope, fn: (tx: Tx) => Promise<T>) =>
    withClient(scope.projectId, async (client) => {
      await enterScope(client, scope, limits.publishableStatementTimeoutMs, begin);
      try {
        const result = await fn(kyselyOf(client));
        const done = await client.query('COMMIT');
        // A transaction aborted by an error the handler swallowed "commits" as a ROLLBACK, which
        // also undoes the batched SET ROLE: report it as the failure it is (withClient then
        // forgets the scope, so the connection gets its role again before the next use).
        if (done.command !== 'COMMIT') throw new Error('tenant transaction was aborted by an earlier error and rolled back');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    });

  const tenant = transaction('BEGIN');
  const snapshot = transaction('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');

  const read = <T>(scope: TenantScope, fn: (db: Tx) => Promise<T>) =>
    withClient(scope.projectId, async (client) => {
      await enterScope(client, scope, limits.publishableStatementTimeoutMs);
      return fn(kyselyOf(client));
    });

  return {
    admin,
    pool,
    tenant,
    read,
    snapshot,
    get reachable() {
      return availability.reachable;
    },
    usage() {
      const of = (p: pg.Pool): PoolUsage => ({ total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount });
      return { tenant: of(tenantPool), admin: of(pool) };
    },
    async close() {
      const closed = open.allClosed();
      // The pools themselves, not admin.destroy(): Kysely ends its pool only if it ever ran a
      // query, and graphile-worker uses `pool` directly.
      await Promise.all([pool.end(), tenantPool.end()]);
      await closed;
    },
  };
}
