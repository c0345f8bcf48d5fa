/**
 * Connection pools, Kysely instances and tenant-scoped database access.
 *
 * Two pools. `admin` connects as the database owner: platform tables (operators, projects,
 * the job queue) and migrations. The tenant pool's connections always run as one of the three
 * members of the `plinth_api` role (`roleFor`: publishable-key access, the auth flows of a
 * publishable key, or full project access),
 * none with BYPASSRLS: every query on them is subject to the row-level-security policies in
 * sql/, which read the tenant scope (project, user, key kind) from the `plinth.*` settings.
 *
 * A tenant connection is only ever handed to code through `tenant()`, `read()` or `snapshot()`,
 * and the scope lives no longer than a transaction: `tenant()`/`snapshot()` set it with
 * `set_config(…, true)` (role included) in the same round trip as their BEGIN, and every
 * statement of `read()` carries it in its own round trip (scoped-query.ts): a single-statement
 * read still costs one round trip, like hand-written SQL. No connection holds a scope between
 * transactions, so the tenant pool may sit behind a transaction pooler (PgBouncer
 * `pool_mode = transaction`, docs/scaling.md): what needs a session (LISTEN, migrations, session
 * advisory locks, graphile-worker) uses the owner pool on `directUrl` instead. Between
 * transactions a tenant connection is its login role again; code never gets it then (`HELD`).
 *
 * Prepared statements: named ones (parsed and planned once per connection) when the tenant
 * pool talks to PostgreSQL directly; behind a pooler that does not track them (PgBouncer before
 * 1.21, or without max_prepared_statements) only the unnamed statement. Names are a hash of the
 * text, so a statement name always means the same SQL on any server connection.
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
import { createHash } from 'node:crypto';
import { isObjectId } from '../lib/ids.js';
import { Availability, type AvailabilityChange } from '../lib/availability.js';
import { fromDatabase, isDatabaseUnavailable, sqlState } from './errors.js';
import { ProjectGate } from './gate.js';
import { ScopedQuery } from './scoped-query.js';
import { Replicas, type ReplicaOptions } from './replicas.js';
import type { Database } from '../database.js';
import type { PoolUsage } from '../lib/metrics.js';

export type KeyKind = 'secret' | 'publishable' | 'operator' | 'system';

export interface TenantScope {
  projectId: string;
  userId?: string | null;
  keyKind: KeyKind;
  /**
   * Publishable keys only: the auth flows acting for the one account they authenticate
   * (sign-up, sign-in, refresh, /me), as role plinth_api_account, which the users
   * collection's access rules do not govern (migrations/063_users_rules.sql).
   */
  account?: boolean;
  /**
   * The custom claims of the caller's verified access token (`claims`, put there by the
   * project's token-claims function), as JSON text: what access rules read as `@auth.claims.*`
   * (`plinth_claims()`, sql/25_rules_functions.sql). Only ever from a token this server
   * verified (tokens.ts), only with `userId`. Absent: no `plinth.claims` is set at all, so the
   * scope statement is the same as without the feature.
   */
  claims?: string | null;
}

/** The largest claims text a scope carries (the hook's output is at most 4 KiB; auth-hooks.ts). */
export const MAX_SCOPE_CLAIMS_CHARS = 16_384;

export type Tx = Kysely<Database>;

export interface Db {
  admin: Kysely<Database>;
  /** The owner pool (graphile-worker, the bus). */
  pool: pg.Pool;
  /** A transaction in the tenant scope: use for writes and anything that must be atomic. */
  tenant<T>(scope: TenantScope, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Statements in the tenant scope without a transaction (each autocommits): for reads. */
  read<T>(scope: TenantScope, fn: (db: Tx) => Promise<T>): Promise<T>;
  /**
   * A lag-tolerant read (lists, counts, aggregates, gets) in the tenant scope: on a read replica
   * when one has this project's writes (and `after`, the client's commit position token), else
   * like read(). Must not write. Without replicas it is read().
   */
  replicaRead<T>(scope: TenantScope, fn: (db: Tx) => Promise<T>, after?: string): Promise<T>;
  /** The read replicas (DATABASE_READ_URL), or null. */
  readonly replicas: Replicas | null;
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
const PREPARED = Symbol('plinth.prepared');
const KYSELY = Symbol('plinth.kysely');
const HELD = Symbol('plinth.held');
const STATEMENT_SCOPE = Symbol('plinth.statementScope');
const WROTE = Symbol('plinth.wrote');
type ScopedClient = pg.PoolClient & {
  /** Statement names this connection runs its queries under (at most MAX_PREPARED). */
  [PREPARED]?: Set<string>;
  /** This connection's own Kysely instance (kyselyOf). */
  [KYSELY]?: Kysely<Database>;
  /** Whether a tenant()/read()/snapshot() call holds the connection now. */
  [HELD]?: boolean;
  /** Inside read(): the scope each statement carries; undefined inside a transaction. */
  [STATEMENT_SCOPE]?: ScopeValues;
  /** Inside read() with replicas: whether a statement of this call wrote. */
  [WROTE]?: boolean;
};

/**
 * The role a scope runs as (migrations/011_api_key_roles.sql, 063_users_rules.sql): all are
 * members of plinth_api (its grants, tenant isolation); the documents and app_users policies
 * differ by role.
 */
const roleFor = (scope: TenantScope) =>
  scope.keyKind !== 'publishable' ? 'plinth_api_full' : scope.account === true ? 'plinth_api_account' : 'plinth_api_publishable';

/** Distinct statements kept prepared per connection; rarer shapes beyond it are parsed each time. */
const MAX_PREPARED = 256;

/** A statement's name: a hash of its text, so one name is one SQL text on every connection. */
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = 'p' + createHash('sha1').update(text).digest('base64url').slice(0, 22);
    if (statementNames.size < 4 * MAX_PREPARED) statementNames.set(text, name);
  }
  return name;
}

/** The scope of a read() as statement parameters: role, project, user, key kind (+ statement_timeout, + claims). */
interface ScopeValues {
  values: string[];
  /** Whether `values` carries a statement_timeout (publishable keys). */
  timeout: boolean;
  /** Whether `values` ends with the token's claims (TenantScope.claims). */
  claims: boolean;
}

const SCOPE_SQL =
  `SELECT set_config('role', $1, true), set_config('plinth.project_id', $2, true), ` +
  `set_config('plinth.user_id', $3, true), set_config('plinth.key_kind', $4, true)`;
const SCOPE_TIMEOUT_SQL = `${SCOPE_SQL}, set_config('statement_timeout', $5, true)`;
/**
 * With a token's claims: one more set_config in the same statement (no round trip more). A
 * scope without claims never names plinth.claims: it is only ever set transaction-locally, so
 * outside such a statement it is '' (or unset), which plinth_claims() reads as no claims.
 */
const SCOPE_CLAIMS_SQL = `${SCOPE_SQL}, set_config('plinth.claims', $5, true)`;
const SCOPE_TIMEOUT_CLAIMS_SQL = `${SCOPE_TIMEOUT_SQL}, set_config('plinth.claims', $6, true)`;

/** The scope statement of a read() and its name when prepared (one name per text). */
function scopeCall(scope: ScopeValues, prepare: boolean): { text: string; name: string | undefined } {
  const [text, name] = scope.claims
    ? scope.timeout ? [SCOPE_TIMEOUT_CLAIMS_SQL, 'plinth_scope_tc'] : [SCOPE_CLAIMS_SQL, 'plinth_scope_c']
    : scope.timeout ? [SCOPE_TIMEOUT_SQL, 'plinth_scope_t'] : [SCOPE_SQL, 'plinth_scope'];
  return { text, name: prepare ? name : undefined };
}

/** Checks a scope; throws on anything that is not a well-formed one (values get inlined). */
function checkScope(scope: TenantScope): string {
  const userId = scope.userId ?? '';
  if (!isObjectId(scope.projectId)) throw new Error('tenant scope needs a valid project id');
  if (userId !== '' && !isObjectId(userId)) throw new Error('tenant scope has an invalid user id');
  if (!KEY_KINDS.has(scope.keyKind)) throw new Error('tenant scope has an invalid key kind');
  const claims = scope.claims;
  if (claims !== undefined && claims !== null) {
    // Claims speak for the token's user: never without one, never oversized (they are inlined, quoted).
    if (userId === '') throw new Error('tenant scope has claims without a user');
    if (typeof claims !== 'string' || claims.length > MAX_SCOPE_CLAIMS_CHARS) throw new Error('tenant scope has invalid claims');
  }
  return userId;
}

function scopeValues(scope: TenantScope, publishableMs: number): ScopeValues {
  const userId = checkScope(scope);
  const values = [roleFor(scope), scope.projectId, userId, scope.keyKind];
  const timeout = scope.keyKind === 'publishable';
  if (timeout) values.push(String(Math.trunc(publishableMs)));
  const claims = typeof scope.claims === 'string';
  if (claims) values.push(scope.claims!);
  return { values, timeout, claims };
}

/**
 * The scope as a statement that sets it for the current transaction (role, settings, and for
 * publishable keys the statement timeout). Values are inlined only after strict validation.
 */
export function scopeStatement(scope: TenantScope, publishableMs = DEFAULT_TENANT_LIMITS.publishableStatementTimeoutMs): string {
  const userId = checkScope(scope);
  const timeout = scope.keyKind === 'publishable' ? `, set_config('statement_timeout', '${Math.trunc(publishableMs)}', true)` : '';
  // The claims are JSON text: quoted with escapeLiteral (E'' when it holds a backslash).
  const claims = typeof scope.claims === 'string' ? `, set_config('plinth.claims', ${pg.escapeLiteral(scope.claims)}, true)` : '';
  return (
    `SELECT set_config('role', '${roleFor(scope)}', true), ` +
    `set_config('plinth.project_id', '${scope.projectId}', true), ` +
    `set_config('plinth.user_id', '${userId}', true), ` +
    `set_config('plinth.key_kind', '${scope.keyKind}', true)${timeout}${claims}`
  );
}

/**
 * The Kysely instance tenant code gets for this connection. Inside read() every query carries
 * the caller's scope (ScopedQuery); inside a transaction it runs plainly (the scope was set with
 * BEGIN). A handle kept past the end of its call refuses to run while the connection is back
 * in the pool. Code must not keep one: once another call holds the connection, the handle
 * would run in that call's scope.
 */
function kyselyOf(client: ScopedClient, prepare: boolean, probe: boolean): Kysely<Database> {
  if (client[KYSELY]) return client[KYSELY];
  const named = (client[PREPARED] ??= new Set());
  /** The name to run `text` under, or undefined for the unnamed statement (pg parses a name once per connection). */
  const nameFor = (text: string) => {
    if (!prepare) return undefined;
    const name = statementName(text);
    if (named.has(name)) return name;
    if (named.size >= MAX_PREPARED) return undefined;
    named.add(name);
    return name;
  };
  const query = (text: string, values?: unknown[]) => {
    const scope = client[STATEMENT_SCOPE];
    if (!scope) return client.query({ name: nameFor(text), text, values });
    const call = scopeCall(scope, prepare);
    const q = new ScopedQuery(
      { name: nameFor(text), text, values },
      { text: call.text, name: call.name, values: scope.values },
      probe ? { name: prepare ? 'plinth_wrote' : undefined } : undefined,
    );
    // The callback form: pool.ts's watchPool wraps it (error tagging, availability).
    return new Promise<pg.QueryResult>((resolve, reject) => {
      client.query(q as unknown as pg.QueryConfig, ((err: Error | undefined, res: pg.QueryResult) => {
        if (q.wrote) client[WROTE] = true;
        return err ? reject(err) : resolve(res);
      }) as never);
    });
  };
  const connection = { query: query as unknown as PostgresPoolClient['query'], release: () => {} };
  const pool: PostgresPool = {
    async connect(): Promise<PostgresPoolClient> {
      if (!client[HELD]) throw new Error('tenant queries must run inside db.tenant() or db.read() (or db.snapshot())');
      return connection;
    },
    async end() {},
  };
  return (client[KYSELY] = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }));
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
  onAvailabilityChange?: (change: AvailabilityChange & { target?: string }) => void;
  /**
   * The owner pool's server (graphile-worker, the bus's peers query, session advisory locks)
   * when `databaseUrl` is a transaction pooler: PostgreSQL itself. Defaults to `databaseUrl`.
   */
  directUrl?: string;
  /**
   * Whether tenant statements are named prepared statements. Defaults to true when the tenant
   * pool talks to PostgreSQL directly (no `directUrl`, or the same URL) and false otherwise: a
   * transaction pooler must track them (PgBouncer >= 1.21 with max_prepared_statements > 0).
   */
  preparedStatements?: boolean;
  /** Streaming replicas for lag-tolerant reads (replicaRead), with their routing bounds. */
  readUrls?: string[];
  replicas?: ReplicaOptions;
}

/** SQLSTATE 25P02: a statement sent into a transaction an earlier error aborted. */
const ABORTED = '25P02';
const ABORTED_MESSAGE = 'tenant transaction was aborted by an earlier error and rolled back';

export function createDb(
  databaseUrl: string,
  sizes: PoolSizes = { tenant: 20, admin: 10 },
  limits: TenantLimits = DEFAULT_TENANT_LIMITS,
  options: DbOptions = {},
): Db {
  const connectionTimeoutMillis = options.connectTimeoutMs ?? 5000;
  const directUrl = options.directUrl ?? databaseUrl;
  const pooled = directUrl !== databaseUrl;
  const prepare = options.preparedStatements ?? !pooled;
  const pool = new pg.Pool({ connectionString: directUrl, max: sizes.admin, idleTimeoutMillis: 30_000, connectionTimeoutMillis });
  const tenantPool = new pg.Pool({ connectionString: databaseUrl, max: sizes.tenant, idleTimeoutMillis: 30_000, connectionTimeoutMillis });
  const onChange = options.onAvailabilityChange;
  // One tracker per server: with a pooler in front, the pooler and PostgreSQL come and go apart.
  const availability = new Availability(onChange && ((c) => onChange(pooled ? { ...c, target: 'direct' } : c)));
  const tenantAvailability = pooled ? new Availability(onChange && ((c) => onChange({ ...c, target: 'pooler' }))) : availability;
  const watched: Array<[pg.Pool, Availability]> = [
    [pool, availability],
    [tenantPool, tenantAvailability],
  ];
  for (const [p, a] of watched) {
    p.on('error', () => {}); // idle-client errors surface on next use
    watchPool(p, a);
  }
  const replicaPools: pg.Pool[] = [];
  const replicas = options.readUrls?.length
    ? new Replicas(
        options.readUrls,
        (url) => {
          const p = new pg.Pool({ connectionString: url, max: sizes.tenant, idleTimeoutMillis: 30_000, connectionTimeoutMillis: Math.min(connectionTimeoutMillis, 1000) });
          p.on('error', () => {});
          watchPool(p, new Availability()); // errors tagged; availability is the poller's business
          replicaPools.push(p);
          return p;
        },
        pool,
        options.replicas ?? { maxLagMs: 5000, afterWriteMs: 5000 },
      )
    : null;
  const probe = replicas !== null;
  const replicaPrepare = options.preparedStatements !== false;
  const open = trackConnections([pool, tenantPool, ...replicaPools]);
  const admin = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });

  const gate = new ProjectGate(limits.projectConcurrency, limits.queueWaitMs);

  async function withClient<T>(projectId: string, fn: (client: ScopedClient) => Promise<T>, from = tenantPool): Promise<T> {
    const leave = await gate.enter(projectId);
    try {
      return await connected(fn, from);
    } finally {
      leave();
    }
  }

  async function connected<T>(fn: (client: ScopedClient) => Promise<T>, from: pg.Pool): Promise<T> {
    const client: ScopedClient = await from.connect();
    client[HELD] = true;
    try {
      return await fn(client);
    } finally {
      client[HELD] = false;
      client[STATEMENT_SCOPE] = undefined;
      client[WROTE] = false;
      client.release(); // pg-pool discards a connection that broke
    }
  }

  /** With replicas, COMMIT also says whether the transaction wrote (in the same round trip). */
  const commit = probe ? 'SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS wrote; COMMIT' : 'COMMIT';

  const transaction = (begin: string, writes: boolean) => async <T>(scope: TenantScope, fn: (tx: Tx) => Promise<T>) => {
    // Role and settings for this transaction only, in BEGIN's round trip. A rollback or the
    // commit ends them: the connection carries nothing into its next use.
    const enter = `${begin}; ${scopeStatement(scope, limits.publishableStatementTimeoutMs)}`;
    let wrote = false;
    const result = await withClient(scope.projectId, async (client) => {
      await client.query(enter);
      try {
        const result = await fn(kyselyOf(client, prepare, false));
        const answers = (await client.query(writes ? commit : 'COMMIT').catch((err) => {
          throw sqlState(err) === ABORTED ? new Error(ABORTED_MESSAGE) : err;
        })) as unknown as pg.QueryResult | pg.QueryResult[];
        const done = Array.isArray(answers) ? answers[1]! : answers;
        // A transaction aborted by an error the handler swallowed "commits" as a ROLLBACK:
        // report it as the failure it is.
        if (done.command !== 'COMMIT') throw new Error(ABORTED_MESSAGE);
        wrote = Array.isArray(answers) && (answers[0]!.rows[0] as { wrote?: boolean } | undefined)?.wrote === true;
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    });
    if (wrote) await replicas!.wrote(scope.projectId);
    return result;
  };

  const tenant = transaction('BEGIN', true);
  const snapshot = transaction('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY', false);

  const read = async <T>(scope: TenantScope, fn: (db: Tx) => Promise<T>) => {
    const values = scopeValues(scope, limits.publishableStatementTimeoutMs);
    let wrote = false;
    const result = await withClient(scope.projectId, async (client) => {
      client[STATEMENT_SCOPE] = values;
      try {
        return await fn(kyselyOf(client, prepare, probe));
      } finally {
        wrote = client[WROTE] === true;
      }
    });
    if (wrote) await replicas!.wrote(scope.projectId);
    return result;
  };

  const replicaRead = async <T>(scope: TenantScope, fn: (db: Tx) => Promise<T>, after?: string): Promise<T> => {
    if (!replicas) return read(scope, fn);
    const choice = replicas.choose(scope.projectId, after);
    if (typeof choice === 'string') {
      replicas.counts[choice]++;
      return read(scope, fn);
    }
    const values = scopeValues(scope, limits.publishableStatementTimeoutMs);
    try {
      const result = await withClient(
        scope.projectId,
        async (client) => {
          client[STATEMENT_SCOPE] = values;
          return fn(kyselyOf(client, replicaPrepare, false));
        },
        choice.pool,
      );
      replicas.counts.replica++;
      return result;
    } catch (err) {
      if (!replicas.failed(choice, err)) {
        replicas.counts.replica++; // the replica answered: a client's error (a 404) is its answer
        throw err;
      }
      replicas.counts.primary_fallback++;
      return read(scope, fn);
    }
  };

  return {
    admin,
    pool,
    tenant,
    read,
    replicaRead,
    replicas,
    snapshot,
    get reachable() {
      return availability.reachable && tenantAvailability.reachable;
    },
    usage() {
      const of = (p: pg.Pool): PoolUsage => ({ total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount });
      return { tenant: of(tenantPool), admin: of(pool) };
    },
    async close() {
      const closed = open.allClosed();
      // The pools themselves, not admin.destroy(): Kysely ends its pool only if it ever ran a
      // query, and graphile-worker uses `pool` directly.
      await Promise.all([pool.end(), tenantPool.end(), replicas?.close()]);
      await closed;
    },
  };
}
