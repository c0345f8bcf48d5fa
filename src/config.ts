/**
 * The only module that reads the environment. Every setting is parsed and validated here,
 * once, at start-up; a bad value stops the process with a message naming the variable.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseDuration } from './lib/duration.js';

export type RouteGroup = 'public' | 'dashboard' | 'all';
export type StorageDriver = 'local' | 's3';
/** LOG_FORMAT: JSON lines (production, pipes) or one readable line per event (a developer's terminal). */
export type LogFormat = 'json' | 'pretty';
/** Fastify's trustProxy: none/all, a hop count, or the proxies' addresses and CIDR ranges. */
export type TrustProxy = boolean | number | string[];

export interface S3Config {
  endpoint?: string;
  region: string;
  bucket?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  publicUrl?: string;
}

export interface Config {
  nodeEnv: string;
  production: boolean;
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  /**
   * DATABASE_DIRECT_URL: PostgreSQL itself when DATABASE_URL is a transaction pooler: the owner
   * pool (migrations, the bus, graphile-worker, session advisory locks). Default DATABASE_URL.
   */
  databaseDirectUrl?: string;
  /** DATABASE_PREPARED_STATEMENTS: named prepared statements on tenant connections (auto: only without a pooler). */
  databasePreparedStatements: 'auto' | 'on' | 'off';
  /** DATABASE_READ_URL: streaming replicas (comma-separated) for lag-tolerant reads; empty: none. */
  databaseReadUrls: string[];
  /** Replica routing bounds (docs/scaling.md, "Read replicas"). */
  replicas: {
    /** DATABASE_READ_MAX_LAG_MS: a replica further behind serves nothing (reads go to the primary). */
    maxLagMs: number;
    /** DATABASE_READ_AFTER_WRITE_MS: after a project's write, its reads stay on the primary this long, on every node. */
    afterWriteMs: number;
  };
  publicUrl: string;
  dashboardUrl: string;
  routes: RouteGroup;
  /** DASHBOARD: serve the operator console at /_/ (with the dashboard routes). */
  dashboard: boolean;
  encryptionKey: Buffer;
  dashboardJwtSecret: Buffer;
  adminEmail?: string;
  allowedOrigins: string[];
  /** TRUST_PROXY: whose X-Forwarded-For decides the client address (rate limits, sessions). */
  trustProxy: TrustProxy;
  redisUrl?: string;
  /** REDIS_COMMAND_TIMEOUT_MS: an unanswered Redis command by then means "Redis is away". */
  redisCommandTimeoutMs: number;
  bodyLimit: number;
  /** IMPORT_MAX_BYTES: the largest project archive an import reads, decompressed. */
  importMaxBytes: number;
  /** IMPORT_MAX_LINES: the most lines (records) a project archive an import reads may have. */
  importMaxLines: number;
  /** IMPORT_TIMEOUT: the longest an import may take, upload included (408 import_timeout). */
  importTimeoutSeconds: number;
  /** Scheduled backups (docs/backup.md): the schedule of projects without one of their own, and the attempts of a run. */
  backups: { defaultPaid: 'off' | 'daily' | 'weekly'; defaultFree: 'off' | 'daily' | 'weekly'; maxAttempts: number };
  logLevel: string;
  logFormat: LogFormat;
  userAccessTokenTtl: { text: string; seconds: number };
  userRefreshTokenTtlSeconds: number;
  rateLimitScale: number;
  /** PASSWORD_HASH_CONCURRENCY: argon2 hashes/verifies run at once (src/lib/passwords.ts). */
  passwordHashConcurrency: number;
  /** Noisy-neighbour bounds of tenant work (src/db/pool.ts, src/db/gate.ts). */
  tenantDb: { projectConcurrency: number; queueWaitMs: number; publishableStatementTimeoutMs: number };
  /** DB_CONNECT_TIMEOUT_MS: longest wait for a database connection before the request answers 503. */
  dbConnectTimeoutMs: number;
  storage: {
    driver: StorageDriver;
    localDir: string;
    s3: S3Config;
    /** STORAGE_ALLOW_PRIVATE_ENDPOINTS: a project's own bucket may live on loopback/private addresses. */
    allowPrivateEndpoints: boolean;
    /** Resumable (tus) uploads: the largest file per plan, in bytes (docs/storage.md). */
    resumable: { maxFileBytes: { free: number; pro: number } };
    /** Image transformations (src/modules/storage/images). */
    images: { concurrency: number; maxInputPixels: number; maxInputBytes: number; missesPerMinute: number };
  };
  mail: {
    resendApiKey?: string;
    resendBaseUrl?: string;
    from: string;
    webhookSecret?: string;
    /** MAIL_MONTHLY_LIMIT: replaces every plan's monthly mail limit (-1 unlimited); unset = plans decide. */
    monthlyLimitOverride?: number;
  };
  ai: { groqApiKey?: string; groqBaseUrl: string; model: string; timeoutMs: number };
  /**
   * OPERATOR_GITHUB_CLIENT_ID / OPERATOR_GITHUB_CLIENT_SECRET: the platform's own GitHub OAuth
   * app, for "Sign in with GitHub" at the console (docs/operators-and-projects.md); both or none.
   */
  operatorGithub?: { clientId: string; clientSecret: string };
  oauth: {
    githubBaseUrl: string;
    githubApiBaseUrl: string;
    googleAuthUrl: string;
    googleTokenUrl: string;
    googleUserinfoUrl: string;
    googleJwksUrl: string;
    /** OIDC_ALLOW_PRIVATE_ISSUERS: a project's OpenID Connect issuer may be plain http on loopback/private addresses. */
    allowPrivateIssuers: boolean;
    /** OIDC_HTTP_TIMEOUT_MS: how long a request to an OpenID Connect provider may take. */
    httpTimeoutMs: number;
  };
  workerConcurrency: number;
  /** WORKER_DEAD_AFTER_MS: a worker process silent this long is dead; its locked jobs go to others. */
  workerDeadAfterMs: number;
  runWorker: boolean;
  /**
   * METRICS_TOKEN: when set, GET /metrics answers with `Authorization: Bearer <token>` only.
   * METRICS_PORT: when set, a second listener on 127.0.0.1:<port> serves /metrics without a
   * token (API nodes and workers alike). Neither set: no metrics are served (404).
   */
  metrics: { token?: string; port?: number };
  /** SHUTDOWN_DRAIN_MS: on SIGTERM, how long /readyz answers 503 before the listener closes. */
  shutdownDrainMs: number;
  /** The change stream and its realtime subscribers (docs/realtime.md). */
  realtime: {
    pollMs: number;
    heartbeatMs: number;
    retentionHours: number;
    maxStreamsPerProject: number;
    maxSubscriptions: number;
  };
  /** Outbound webhooks (docs/webhooks.md). */
  webhooks: {
    timeoutMs: number;
    /** An endpoint failing without a success for this long is disabled and its operator told. */
    disableAfterHours: number;
    /** WEBHOOK_ALLOW_PRIVATE_URLS: endpoints may be loopback/private addresses (development). */
    allowPrivateUrls: boolean;
  };
  /** The per-project request log (docs/dashboard.md "Request log"). */
  requestLog: {
    /** REQUEST_LOG: record public-API requests at all. */
    enabled: boolean;
    /** Rows older than this are deleted by the trim job. */
    retentionHours: number;
    /** At most this many rows per project (the newest are kept). */
    maxRowsPerProject: number;
    /** Rows one node holds before writing; beyond, new rows are dropped and counted. */
    bufferRows: number;
    /** How often a node writes what it holds (sooner when a batch fills). */
    flushMs: number;
  };
  /** Usage over time per project and hour, and its alerts (docs/dashboard.md "Usage history"). */
  usage: {
    /** USAGE_COUNTERS: count requests, invocations and AI calls per project and hour at all. */
    counters: boolean;
    /** How often a node adds what it counted to the hourly table. */
    flushMs: number;
    /** Hours older than this many days are removed by the `usage:trim` job. */
    retentionDays: number;
  };
  /** The per-project audit log of operator changes (docs/audit.md). */
  audit: {
    /** Entries older than this many days are removed by the `audit:trim` job. */
    retentionDays: number;
  };
  /** Server-side functions (docs/functions.md). */
  functions: {
    /** Sandbox processes one node runs at most (started on demand). */
    sandboxes: number;
    /** Ceiling of one function unit's memory, MiB: a hard cap. */
    memoryMb: number;
    /** Sandboxes one project may hold at once on a node. */
    projectConcurrency: number;
    /** Invocations of its project one sandbox runs at once (each in its own engine instance). */
    invocationsPerSandbox: number;
    /** Invocations of one project waiting for a sandbox on a node; beyond, 429. */
    projectQueue: number;
    /** Invocations per project per minute (all kinds; shared by all nodes with Redis). */
    invocationsPerMinute: number;
    /** `fetch` from a function may reach loopback and private addresses (tests only). */
    allowPrivateFetch: boolean;
    /** How long the invocation log keeps an invocation, and how many per project. */
    logRetentionHours: number;
    maxLogRowsPerProject: number;
  };
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function fail(name: string, why: string): never {
  throw new ConfigError(`Invalid configuration: ${name} ${why}`);
}

function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function int(env: Env, name: string, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (!/^\d+$/.test(raw)) fail(name, `must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) fail(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function num(env: Env, name: string, def: number): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) fail(name, `must be a non-negative number, got "${raw}"`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  return fail(name, `must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, def?: string): string | undefined {
  const raw = str(env, name) ?? def;
  if (raw === undefined) return undefined;
  try {
    const u = new URL(raw);
    if (!/^https?:$/.test(u.protocol)) throw new Error();
  } catch {
    fail(name, `must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** The console's GitHub OAuth app: both variables or neither (one alone is a mistake worth stopping for). */
function operatorGithub(env: Env): { clientId: string; clientSecret: string } | undefined {
  const clientId = str(env, 'OPERATOR_GITHUB_CLIENT_ID');
  const clientSecret = str(env, 'OPERATOR_GITHUB_CLIENT_SECRET');
  if (!clientId && !clientSecret) return undefined;
  if (!clientId) fail('OPERATOR_GITHUB_CLIENT_ID', 'must be set with OPERATOR_GITHUB_CLIENT_SECRET');
  if (!clientSecret) fail('OPERATOR_GITHUB_CLIENT_SECRET', 'must be set with OPERATOR_GITHUB_CLIENT_ID');
  return { clientId, clientSecret };
}

function byteSize(env: Env, name: string, def: number): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  const m = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw);
  if (!m) fail(name, `must be a size like 1048576, 512kb or 1mb, got "${raw}"`);
  const mult = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? 'b').toLowerCase() as 'b'];
  return Number(m[1]) * mult;
}

/** Reads a 64-hex secret from the environment, or (outside production) from/into the data dir. */
function secret(env: Env, name: string, dataDir: string, production: boolean): Buffer {
  const raw = str(env, name);
  if (raw !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(raw)) fail(name, 'must be 64 hexadecimal characters (32 bytes)');
    return Buffer.from(raw, 'hex');
  }
  if (production) fail(name, 'is required when NODE_ENV=production (64 hex characters)');
  const file = path.join(dataDir, 'secrets', `${name.toLowerCase()}.hex`);
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const value = randomBytes(32);
  writeFileSync(file, value.toString('hex'), { mode: 0o600 });
  return value;
}

/**
 * TRUST_PROXY: unset or `false` trusts no proxy (the client address is the TCP peer); a number
 * trusts that many hops; a comma list trusts those proxy addresses / CIDR ranges; `true` trusts
 * any X-Forwarded-For (only behind a proxy that always overwrites it).
 */
function trustProxy(env: Env, name: string): TrustProxy {
  const raw = str(env, name);
  if (raw === undefined || /^false$/i.test(raw)) return false;
  if (/^true$/i.test(raw)) return true;
  if (/^\d+$/.test(raw)) return int(env, name, 0, 0, 32);
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const entry of list) {
    const [addr, bits, extra] = entry.split('/');
    const family = isIP(addr ?? '');
    const maxBits = family === 6 ? 128 : 32;
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits);
    if (!family || !bitsOk || extra !== undefined) {
      fail(name, `must be true, false, a hop count or a comma list of IP addresses / CIDR ranges, got "${entry}"`);
    }
  }
  return list;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], def: T): T {
  const raw = str(env, name) ?? def;
  if (!allowed.includes(raw as T)) fail(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function duration(env: Env, name: string, def: string): { text: string; seconds: number } {
  const text = str(env, name) ?? def;
  const seconds = parseDuration(text);
  if (seconds === null || seconds <= 0) fail(name, `must be a duration like 15m, 1h or 900, got "${text}"`);
  return { text, seconds };
}

/** Comma-separated PostgreSQL URLs (replicas). */
function readUrls(env: Env, name: string): string[] {
  const raw = str(env, name);
  if (!raw) return [];
  const urls = raw.split(',').map((u) => u.trim()).filter(Boolean);
  for (const u of urls) if (!/^postgres(ql)?:\/\//.test(u)) fail(name, 'must be postgres:// URLs separated by commas');
  return urls;
}

/** A bearer token for /metrics: long enough not to be guessed, and sendable in a header. */
function metricsToken(env: Env, name: string): string | undefined {
  const raw = str(env, name);
  if (raw !== undefined && !/^[\x21-\x7e]{16,}$/.test(raw)) fail(name, 'must be at least 16 printable characters without spaces');
  return raw;
}

/**
 * `stdoutIsTty` decides the default LOG_FORMAT (pretty on a terminal outside production); it
 * is a parameter so tests can say which case they are.
 */
export function loadConfig(env: Env = process.env, stdoutIsTty = process.stdout.isTTY === true): Config {
  const nodeEnv = str(env, 'NODE_ENV') ?? 'development';
  const production = nodeEnv === 'production';
  const dataDir = path.resolve(str(env, 'PLINTH_DATA_DIR') ?? './.plinth');
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = str(env, 'HOST') ?? (production ? '0.0.0.0' : '127.0.0.1');
  const publicUrl = url(env, 'PUBLIC_URL', `http://localhost:${port}`)!;
  return {
    nodeEnv,
    production,
    port,
    host,
    dataDir,
    databaseUrl: str(env, 'DATABASE_URL'),
    databaseDirectUrl: str(env, 'DATABASE_DIRECT_URL'),
    databasePreparedStatements: oneOf(env, 'DATABASE_PREPARED_STATEMENTS', ['auto', 'on', 'off'] as const, 'auto'),
    databaseReadUrls: readUrls(env, 'DATABASE_READ_URL'),
    replicas: {
      maxLagMs: int(env, 'DATABASE_READ_MAX_LAG_MS', 5000, 0, 3_600_000),
      afterWriteMs: int(env, 'DATABASE_READ_AFTER_WRITE_MS', 5000, 0, 3_600_000),
    },
    publicUrl,
    dashboardUrl: url(env, 'DASHBOARD_URL', publicUrl)!,
    routes: oneOf(env, 'PLINTH_ROUTES', ['public', 'dashboard', 'all'] as const, 'all'),
    dashboard: bool(env, 'DASHBOARD', true),
    encryptionKey: secret(env, 'ENCRYPTION_KEY', dataDir, production),
    dashboardJwtSecret: secret(env, 'DASHBOARD_JWT_SECRET', dataDir, production),
    adminEmail: str(env, 'ADMIN_EMAIL')?.toLowerCase(),
    allowedOrigins: (str(env, 'ALLOWED_ORIGINS') ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    redisUrl: str(env, 'REDIS_URL'),
    redisCommandTimeoutMs: int(env, 'REDIS_COMMAND_TIMEOUT_MS', 1000, 10, 60_000),
    bodyLimit: byteSize(env, 'BODY_LIMIT', 1024 * 1024),
    importMaxBytes: byteSize(env, 'IMPORT_MAX_BYTES', 2 * 1024 * 1024 * 1024),
    importMaxLines: int(env, 'IMPORT_MAX_LINES', 10_000_000, 3),
    importTimeoutSeconds: duration(env, 'IMPORT_TIMEOUT', '30m').seconds,
    backups: {
      defaultPaid: oneOf(env, 'BACKUP_DEFAULT_PAID', ['off', 'daily', 'weekly'] as const, 'daily'),
      defaultFree: oneOf(env, 'BACKUP_DEFAULT_FREE', ['off', 'daily', 'weekly'] as const, 'off'),
      maxAttempts: int(env, 'BACKUP_MAX_ATTEMPTS', 3, 1, 10),
    },
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['json', 'pretty'] as const, stdoutIsTty && !production ? 'pretty' : 'json'),
    userAccessTokenTtl: duration(env, 'USER_ACCESS_TOKEN_TTL', '15m'),
    userRefreshTokenTtlSeconds: duration(env, 'USER_REFRESH_TOKEN_TTL', '7d').seconds,
    rateLimitScale: num(env, 'RATE_LIMIT_SCALE', 1),
    passwordHashConcurrency: int(env, 'PASSWORD_HASH_CONCURRENCY', availableParallelism(), 1, 1024),
    tenantDb: {
      projectConcurrency: int(env, 'PROJECT_DB_CONCURRENCY', 10, 1, 1000),
      queueWaitMs: int(env, 'PROJECT_DB_QUEUE_MS', 1000, 0, 60_000),
      publishableStatementTimeoutMs: int(env, 'PUBLISHABLE_STATEMENT_TIMEOUT_MS', 1500, 100, 600_000),
    },
    dbConnectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
    storage: {
      driver: oneOf(env, 'STORAGE_DRIVER', ['local', 's3'] as const, 'local'),
      localDir: path.join(dataDir, 'storage'),
      s3: {
        endpoint: url(env, 'S3_ENDPOINT'),
        region: str(env, 'S3_REGION') ?? 'us-east-1',
        bucket: str(env, 'S3_BUCKET'),
        accessKeyId: str(env, 'S3_ACCESS_KEY_ID'),
        secretAccessKey: str(env, 'S3_SECRET_ACCESS_KEY'),
        forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
        publicUrl: url(env, 'S3_PUBLIC_URL'),
      },
      allowPrivateEndpoints: bool(env, 'STORAGE_ALLOW_PRIVATE_ENDPOINTS', !production),
      resumable: {
        maxFileBytes: {
          free: int(env, 'STORAGE_RESUMABLE_MAX_FILE_FREE', 50 * 1024 * 1024, 1),
          pro: int(env, 'STORAGE_RESUMABLE_MAX_FILE_PRO', 5 * 1024 * 1024 * 1024, 1),
        },
      },
      images: {
        concurrency: int(env, 'IMAGE_TRANSFORM_CONCURRENCY', Math.max(1, Math.floor(availableParallelism() / 2)), 1, 64),
        maxInputPixels: int(env, 'IMAGE_MAX_INPUT_PIXELS', 40_000_000, 1),
        maxInputBytes: int(env, 'IMAGE_MAX_INPUT_BYTES', 25 * 1024 * 1024, 1),
        missesPerMinute: int(env, 'IMAGE_TRANSFORMS_PER_MINUTE', 120, 1),
      },
    },
    mail: {
      resendApiKey: str(env, 'RESEND_API_KEY'),
      resendBaseUrl: url(env, 'RESEND_BASE_URL'),
      from: str(env, 'MAIL_FROM') ?? 'Plinth <no-reply@plinth.local>',
      webhookSecret: str(env, 'MAIL_WEBHOOK_SECRET'),
      monthlyLimitOverride: str(env, 'MAIL_MONTHLY_LIMIT') === '-1' ? -1
        : str(env, 'MAIL_MONTHLY_LIMIT') === undefined ? undefined : int(env, 'MAIL_MONTHLY_LIMIT', 0),
    },
    ai: {
      groqApiKey: str(env, 'GROQ_API_KEY'),
      groqBaseUrl: url(env, 'GROQ_BASE_URL', 'https://api.groq.com/openai/v1')!,
      model: str(env, 'AI_MODEL') ?? 'llama-3.3-70b-versatile',
      timeoutMs: int(env, 'AI_TIMEOUT_MS', 20_000, 100),
    },
    operatorGithub: operatorGithub(env),
    oauth: {
      githubBaseUrl: url(env, 'GITHUB_BASE_URL', 'https://github.com')!,
      githubApiBaseUrl: url(env, 'GITHUB_API_BASE_URL', 'https://api.github.com')!,
      googleAuthUrl: url(env, 'GOOGLE_AUTH_URL', 'https://accounts.google.com/o/oauth2/v2/auth')!,
      googleTokenUrl: url(env, 'GOOGLE_TOKEN_URL', 'https://oauth2.googleapis.com/token')!,
      googleUserinfoUrl: url(env, 'GOOGLE_USERINFO_URL', 'https://openidconnect.googleapis.com/v1/userinfo')!,
      googleJwksUrl: url(env, 'GOOGLE_JWKS_URL', 'https://www.googleapis.com/oauth2/v3/certs')!,
      allowPrivateIssuers: bool(env, 'OIDC_ALLOW_PRIVATE_ISSUERS', !production),
      httpTimeoutMs: int(env, 'OIDC_HTTP_TIMEOUT_MS', 10_000, 500, 120_000),
    },
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 10, 1, 200),
    workerDeadAfterMs: int(env, 'WORKER_DEAD_AFTER_MS', 45_000, 1000, 4 * 3600_000),
    runWorker: bool(env, 'PLINTH_RUN_WORKER', true),
    metrics: {
      token: metricsToken(env, 'METRICS_TOKEN'),
      port: str(env, 'METRICS_PORT') === undefined ? undefined : int(env, 'METRICS_PORT', 0, 1, 65535),
    },
    shutdownDrainMs: int(env, 'SHUTDOWN_DRAIN_MS', 0, 0, 600_000),
    realtime: {
      pollMs: int(env, 'REALTIME_POLL_MS', 100, 10, 10_000),
      heartbeatMs: int(env, 'REALTIME_HEARTBEAT_MS', 15_000, 100, 300_000),
      retentionHours: int(env, 'CHANGE_RETENTION_HOURS', 24, 1, 24 * 30),
      maxStreamsPerProject: int(env, 'REALTIME_MAX_STREAMS_PER_PROJECT', 1000, 1, 1_000_000),
      maxSubscriptions: int(env, 'REALTIME_MAX_SUBSCRIPTIONS', 20, 1, 1000),
    },
    webhooks: {
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      disableAfterHours: int(env, 'WEBHOOK_DISABLE_AFTER_HOURS', 120, 1, 24 * 90),
      allowPrivateUrls: bool(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', !production),
    },
    requestLog: {
      enabled: bool(env, 'REQUEST_LOG', true),
      retentionHours: int(env, 'REQUEST_LOG_RETENTION_HOURS', 24, 1, 24 * 30),
      maxRowsPerProject: int(env, 'REQUEST_LOG_MAX_ROWS', 10_000, 100, 1_000_000),
      bufferRows: int(env, 'REQUEST_LOG_BUFFER_ROWS', 20_000, 100, 1_000_000),
      flushMs: int(env, 'REQUEST_LOG_FLUSH_MS', 1000, 50, 60_000),
    },
    usage: {
      counters: bool(env, 'USAGE_COUNTERS', true),
      flushMs: int(env, 'USAGE_FLUSH_MS', 5000, 50, 300_000),
      retentionDays: int(env, 'USAGE_RETENTION_DAYS', 90, 1, 3650),
    },
    audit: {
      retentionDays: int(env, 'AUDIT_RETENTION_DAYS', 365, 1, 36_500),
    },
    functions: {
      sandboxes: int(env, 'FUNCTIONS_SANDBOXES', 4, 1, 256),
      memoryMb: int(env, 'FUNCTIONS_MEMORY_MB', 64, 16, 2048),
      projectConcurrency: int(env, 'FUNCTIONS_PROJECT_CONCURRENCY', 2, 1, 256),
      invocationsPerSandbox: int(env, 'FUNCTIONS_SANDBOX_INVOCATIONS', 8, 1, 64),
      projectQueue: int(env, 'FUNCTIONS_PROJECT_QUEUE', 100, 0, 100_000),
      invocationsPerMinute: int(env, 'FUNCTIONS_INVOCATIONS_PER_MINUTE', 6000, 1, 10_000_000),
      allowPrivateFetch: bool(env, 'FUNCTIONS_ALLOW_PRIVATE_FETCH', false),
      logRetentionHours: int(env, 'FUNCTIONS_LOG_RETENTION_HOURS', 72, 1, 24 * 30),
      maxLogRowsPerProject: int(env, 'FUNCTIONS_LOG_MAX_ROWS', 10_000, 100, 1_000_000),
    },
  };
}
