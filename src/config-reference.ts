/**
 * The configuration reference: every environment variable src/config.ts reads, its default and
 * its meaning. README.md's "Configuration" table is generated from this list
 * (`npm run docs:config`), and test/config.reference checks both directions: every variable
 * config.ts reads is listed here, every listed variable is read, and the README is current.
 * Markdown is allowed in `default` and `meaning`.
 */
export interface ConfigVariable {
  /** One variable, or a family documented together (the S3_* settings). */
  names: readonly string[];
  default: string;
  meaning: string;
}

export const CONFIG_REFERENCE: readonly ConfigVariable[] = [
  { names: ["PORT"], default: "`3000`", meaning: "HTTP port" },
  { names: ["HOST"], default: "`127.0.0.1` (`0.0.0.0` when `NODE_ENV=production`)", meaning: "Listen address" },
  { names: ["NODE_ENV"], default: "`development`", meaning: "`production` requires the secrets below and sets Secure cookies" },
  { names: ["PLINTH_DATA_DIR"], default: "`./.plinth`", meaning: "Embedded database, local files, generated secrets" },
  { names: ["DATABASE_URL"], default: "— (embedded PostgreSQL)", meaning: "PostgreSQL 15+ connection string" },
  { names: ["DATABASE_DIRECT_URL"], default: "`DATABASE_URL`", meaning: "PostgreSQL itself when `DATABASE_URL` is a transaction pooler (PgBouncer `pool_mode = transaction`): migrations, the LISTEN bus, advisory locks and the job worker use it; request queries use `DATABASE_URL` (docs/scaling.md)" },
  { names: ["DATABASE_PREPARED_STATEMENTS"], default: "`auto`", meaning: "Named prepared statements on request connections: `auto` uses them unless `DATABASE_DIRECT_URL` differs from `DATABASE_URL` (a pooler); `on` only for a pooler that tracks them (PgBouncer ≥ 1.21 with `max_prepared_statements`)" },
  { names: ["DATABASE_READ_URL"], default: "— (none)", meaning: "Streaming replicas, comma-separated: lag-tolerant reads (lists, counts, aggregates, search, schema and dashboard listings) go to them, with read-your-writes (docs/scaling.md)" },
  { names: ["DATABASE_READ_MAX_LAG_MS"], default: "`5000`", meaning: "A replica replaying further behind than this serves no reads until it catches up" },
  { names: ["DATABASE_READ_AFTER_WRITE_MS"], default: "`5000`", meaning: "After a write, that project's reads stay on the primary this long, on every node (clients without the `Plinth-Commit-Position` header still read their writes)" },
  { names: ["DB_CONNECT_TIMEOUT_MS"], default: "`5000`", meaning: "Longest wait for a database connection; then (and whenever the database is unreachable) 503 `database_unavailable` with `Retry-After`" },
  { names: ["PLINTH_ROUTES"], default: "`all`", meaning: "`public`, `dashboard` or `all`: which route groups this node serves" },
  { names: ["DASHBOARD"], default: "`on`", meaning: "`off` stops serving the operator console at `/_/` (nodes with `PLINTH_ROUTES=public` never serve it)" },
  { names: ["PLINTH_RUN_WORKER"], default: "`true`", meaning: "Run the job worker inside the API process" },
  { names: ["WORKER_CONCURRENCY"], default: "`10`", meaning: "Jobs run at once per worker" },
  { names: ["WORKER_DEAD_AFTER_MS"], default: "`45000`", meaning: "A worker process whose heartbeat is this old is dead: another worker process releases its locked jobs (docs/scaling.md)" },
  { names: ["METRICS_TOKEN"], default: "— (no `/metrics`)", meaning: "Serves Prometheus metrics at `GET /metrics` on the API port, to `Authorization: Bearer <token>` only (16+ printable characters; compared in constant time). See docs/scaling.md, \"Metrics and probes\"" },
  { names: ["METRICS_PORT"], default: "—", meaning: "Serves `GET /metrics` without a token on a second listener bound to `127.0.0.1:<port>`, in API nodes and `plinth worker` alike. Neither this nor `METRICS_TOKEN` set: no metrics are served" },
  { names: ["SHUTDOWN_DRAIN_MS"], default: "`0`", meaning: "On SIGTERM, how long `/readyz` answers 503 (requests still served) before the listener closes: set it above your load balancer's or orchestrator's readiness-probe interval" },
  { names: ["PUBLIC_URL"], default: "`http://localhost:$PORT`", meaning: "Public address (signed URLs, OAuth callbacks)" },
  { names: ["DASHBOARD_URL"], default: "`PUBLIC_URL`", meaning: "Dashboard address (CORS for dashboard routes)" },
  { names: ["ALLOWED_ORIGINS"], default: "—", meaning: "Extra comma-separated origins allowed on dashboard routes" },
  { names: ["TRUST_PROXY"], default: "`false` (no proxy: the client address is the TCP peer)", meaning: "Which `X-Forwarded-For` to believe for the client address (rate limits, sessions): a hop count (`1`), or the proxies' addresses / CIDR ranges (`10.0.0.0/8,127.0.0.1`); `true` believes any (only behind a proxy that always overwrites it). Set it when running behind a load balancer. See docs/security.md" },
  { names: ["ENCRYPTION_KEY"], default: "generated into the data dir", meaning: "64 hex chars; AES-256-GCM key for secrets at rest. Required in production" },
  { names: ["DASHBOARD_JWT_SECRET"], default: "generated into the data dir", meaning: "64 hex chars; signs operator sessions. Required in production" },
  { names: ["ADMIN_EMAIL"], default: "—", meaning: "The operator with this email is an admin (can change plans)" },
  { names: ["REDIS_URL"], default: "— (in-memory)", meaning: "Shared rate-limit store for several API nodes (per-node memory while it is unreachable; health says `degraded`)" },
  { names: ["REDIS_COMMAND_TIMEOUT_MS"], default: "`1000`", meaning: "A Redis command not answered by then counts as Redis being away" },
  { names: ["PASSWORD_HASH_CONCURRENCY"], default: "the CPUs the process may use (`os.availableParallelism()`)", meaning: "Password hashes and verifies (argon2id, ≈ 25–30 ms of a core each) run at once; the rest wait their turn. The default honours CPU affinity (`taskset`, `--cpuset-cpus`) but not a CPU quota: under `--cpus=1` or a Kubernetes CPU limit, set it to that limit ([docs/auth.md](docs/auth.md))" },
  { names: ["RATE_LIMIT_SCALE"], default: "`1`", meaning: "Multiplies every rate limit; `0` turns them off (benchmarks only; logged loudly)" },
  { names: ["PROJECT_DB_CONCURRENCY"], default: "`10`", meaning: "Tenant database calls one project may run at once (of the 20 tenant connections): the noisy-neighbour cap. Beyond it a call waits up to `PROJECT_DB_QUEUE_MS`, then 429 `project_busy` with `Retry-After: 1`" },
  { names: ["PROJECT_DB_QUEUE_MS"], default: "`1000`", meaning: "How long a call over the project's cap waits for a slot" },
  { names: ["PUBLISHABLE_STATEMENT_TIMEOUT_MS"], default: "`1500`", meaning: "`statement_timeout` of every statement run for a publishable key (browser traffic); regex and deep-offset list timeouts never exceed it" },
  { names: ["BODY_LIMIT"], default: "`1mb`", meaning: "Largest JSON body (`b`, `kb`, `mb`, `gb`)" },
  { names: ["IMPORT_MAX_BYTES"], default: "`2gb`", meaning: "Largest project archive an import reads, decompressed; a free-plan import reads less ([docs/backup.md](docs/backup.md))" },
  { names: ["IMPORT_TIMEOUT"], default: "`30m`", meaning: "Longest a project import may take, upload included: beyond it 408 `import_timeout` and nothing is written ([docs/backup.md](docs/backup.md))" },
  { names: ["IMPORT_MAX_LINES"], default: "`10000000`", meaning: "Most lines (records) a project archive an import reads may have ([docs/backup.md](docs/backup.md))" },
  { names: ["REALTIME_POLL_MS"], default: "`100`", meaning: "How often each API node reads the change stream for its realtime subscribers ([docs/realtime.md](docs/realtime.md))" },
  { names: ["REALTIME_HEARTBEAT_MS"], default: "`15000`", meaning: "A comment line on every realtime stream this often, so proxies keep it open" },
  { names: ["CHANGE_RETENTION_HOURS"], default: "`24`", meaning: "How long the change stream keeps a change: a realtime client resuming from older than that gets `reset`" },
  { names: ["REALTIME_MAX_STREAMS_PER_PROJECT"], default: "`1000`", meaning: "Open realtime streams one project may hold on one API node (beyond: 429 `too_many_streams`)" },
  { names: ["REALTIME_MAX_SUBSCRIPTIONS"], default: "`20`", meaning: "Subscriptions one realtime stream may carry (beyond: 429 `too_many_subscriptions`)" },
  { names: ["WEBHOOK_TIMEOUT_MS"], default: "`10000`", meaning: "How long a webhook delivery waits for the endpoint's answer ([docs/webhooks.md](docs/webhooks.md))" },
  { names: ["WEBHOOK_DISABLE_AFTER_HOURS"], default: "`120`", meaning: "An endpoint failing every delivery this long is disabled and its operator emailed" },
  { names: ["WEBHOOK_ALLOW_PRIVATE_URLS"], default: "`true` outside production, else `false`", meaning: "Webhook endpoints may be `http:` and loopback/private addresses (development only)" },
  { names: ["LOG_LEVEL"], default: "`info`", meaning: "pino level (`silent` to mute)" },
  { names: ["LOG_FORMAT"], default: "`pretty` on a terminal outside production, else `json`", meaning: "`json`: one JSON object per line (request id `reqId` and, for a project-scoped request, `projectId` on every line of the request); `pretty`: one readable line per event, a request as `GET /api/x 200 3.1ms`, errors with their stack" },
  { names: ["USER_ACCESS_TOKEN_TTL"], default: "`15m`", meaning: "End-user access token lifetime" },
  { names: ["USER_REFRESH_TOKEN_TTL"], default: "`7d`", meaning: "End-user refresh token lifetime (sliding)" },
  { names: ["STORAGE_DRIVER"], default: "`local`", meaning: "`local` (files under the data dir) or `s3`" },
  { names: ["S3_ENDPOINT", "S3_REGION", "S3_BUCKET", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "S3_FORCE_PATH_STYLE", "S3_PUBLIC_URL"], default: "— / `us-east-1` / — / — / — / `false` / —", meaning: "Any S3-compatible store" },
  { names: ["STORAGE_ALLOW_PRIVATE_ENDPOINTS"], default: "`false` in production, else `true`", meaning: "Whether a project's own bucket may be on loopback/private addresses (SSRF guard; see docs/storage.md)" },
  { names: ["STORAGE_RESUMABLE_MAX_FILE_FREE", "STORAGE_RESUMABLE_MAX_FILE_PRO"], default: "`52428800` (50 MB), `5368709120` (5 GB)", meaning: "The largest file a resumable (tus) upload may declare, in bytes, on the free and pro plans (docs/storage.md)" },
  { names: ["IMAGE_TRANSFORM_CONCURRENCY"], default: "half the CPUs (at least 1)", meaning: "Image transformations rendered at once per node (sharp, off the event loop); more wait in line" },
  { names: ["IMAGE_MAX_INPUT_PIXELS", "IMAGE_MAX_INPUT_BYTES"], default: "`40000000` / `26214400` (25 MB)", meaning: "Largest original an image transformation decodes: pixels (read from the header, before decoding) and bytes" },
  { names: ["IMAGE_TRANSFORMS_PER_MINUTE"], default: "`120`", meaning: "Image renderings (cache misses) per project per minute; cached derivatives are not counted" },
  { names: ["RESEND_API_KEY"], default: "— (dev outbox)", meaning: "Platform mail key (`re_…`)" },
  { names: ["RESEND_BASE_URL"], default: "Resend's", meaning: "Mail provider base URL (tests point it at a local fake)" },
  { names: ["MAIL_FROM"], default: "`Plinth <no-reply@plinth.local>`", meaning: "Default sender" },
  { names: ["MAIL_WEBHOOK_SECRET"], default: "—", meaning: "Svix signing secret (`whsec_…`) of the platform key's webhooks" },
  { names: ["MAIL_MONTHLY_LIMIT"], default: "— (plans decide)", meaning: "Replaces every plan's monthly mail limit; `-1` unlimited" },
  { names: ["GROQ_API_KEY"], default: "— (AI off unless a personal key exists)", meaning: "Platform AI key (`gsk_…`)" },
  { names: ["GROQ_BASE_URL"], default: "`https://api.groq.com/openai/v1`", meaning: "OpenAI-compatible base URL" },
  { names: ["AI_MODEL"], default: "`llama-3.3-70b-versatile`", meaning: "Model name" },
  { names: ["AI_TIMEOUT_MS"], default: "`20000`", meaning: "AI provider timeout" },
  { names: ["GITHUB_BASE_URL", "GITHUB_API_BASE_URL"], default: "`https://github.com`, `https://api.github.com`", meaning: "GitHub OAuth endpoints" },
  { names: ["GOOGLE_AUTH_URL", "GOOGLE_TOKEN_URL", "GOOGLE_USERINFO_URL", "GOOGLE_JWKS_URL"], default: "Google's", meaning: "Google OAuth endpoints and ID-token signing keys" },
];
