/**
 * The process's Prometheus metrics (prom-client). One registry per AppContext (boot.ts), never
 * a module singleton: the tests build several apps in one process, each with its own counts.
 * What each metric means, and alerts on them: docs/scaling.md, "Metrics and probes".
 *
 * Label values are bounded by construction: routes are the routed URL patterns (never the raw
 * URL: ids would explode the series and leak into dashboards), error codes come from the
 * catalogue, pools and mail senders are fixed lists.
 */
import client from 'prom-client';
import { passwordHashing } from './passwords.js';
import type { ReplicaStats } from '../db/replicas.js';

export interface PoolUsage {
  total: number;
  idle: number;
  waiting: number;
}

export interface JobQueueStats {
  /** Jobs due now and free to take. */
  ready: number;
  /** Jobs a worker holds now. */
  locked: number;
  /** Jobs that used up their attempts (kept by graphile-worker until deleted). */
  failed: number;
  /** Seconds the oldest ready job has been due; 0 when none is. */
  oldestReadyAgeSeconds: number;
}

/** A job worker's state, as src/worker/runner.ts reports it. */
export interface WorkerHealthSample {
  ok: boolean;
  runners: number;
  concurrency: number;
  restarts: number;
  orphans: number;
}

export interface MetricsSources {
  pools(): Record<'tenant' | 'admin', PoolUsage>;
  /** Read at scrape time (cached by the caller); a rejection leaves the job gauges empty. */
  jobs(): Promise<JobQueueStats>;
  /** Read replicas' state and where lag-tolerant reads went (null: no replicas). */
  replicas?(): ReplicaStats | null;
}

export interface Metrics {
  registry: client.Registry;
  /** One answered HTTP request, under its routed pattern (`route` undefined: no route matched). */
  observeRequest(method: string, route: string | undefined, status: number, seconds: number): void;
  /** An error envelope sent with a catalogue code (quota, project_busy, rate_limited…). */
  countError(code: string, status: number): void;
  mailSent(sender: string): void;
  mailFailed(sender: string): void;
  mailRetried(sender: string): void;
  /** This process runs a job worker: its state is sampled at scrape time. */
  watchWorker(source: () => WorkerHealthSample): void;
}

/** Seconds: API latencies from a millisecond to well past the statement timeouts. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });

  const requests = new client.Counter({
    name: 'plinth_http_requests_total',
    help: 'HTTP requests answered, by method, routed route pattern and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: 'plinth_http_request_duration_seconds',
    help: 'Time from receiving an HTTP request to its response, by method, routed route pattern and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const errors = new client.Counter({
    name: 'plinth_http_errors_total',
    help: 'Error envelopes sent, by catalogue code and status (database_limit, storage_limit_exceeded, mail_quota_exceeded, project_busy, rate_limited…).',
    labelNames: ['code', 'status'],
    registers: [registry],
  });
  new client.Gauge({
    name: 'plinth_db_pool_connections',
    help: 'Connections of this process\'s database pools: total open, idle, and callers waiting for one.',
    labelNames: ['pool', 'state'],
    registers: [registry],
    collect() {
      for (const [pool, usage] of Object.entries(sources.pools())) {
        for (const state of ['total', 'idle', 'waiting'] as const) this.set({ pool, state }, usage[state]);
      }
    },
  });
  new client.Gauge({
    name: 'plinth_db_replica_lag_seconds',
    help: 'How far each read replica (DATABASE_READ_URL) replays behind the primary, at its last poll; no sample while it is unreachable.',
    labelNames: ['replica'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of sources.replicas?.()?.replicas ?? []) if (r.lagSeconds !== null) this.set({ replica: r.name }, r.lagSeconds);
    },
  });
  new client.Gauge({
    name: 'plinth_db_replica_up',
    help: 'Whether each read replica answered its last poll as a streaming standby (1) or not (0).',
    labelNames: ['replica'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of sources.replicas?.()?.replicas ?? []) this.set({ replica: r.name }, r.up ? 1 : 0);
    },
  });
  new client.Counter({
    name: 'plinth_db_lag_tolerant_reads_total',
    help: 'Lag-tolerant reads (lists, counts, gets, aggregates) by where they ran: replica, or the primary and why (written: the project wrote recently; position: the client\'s commit position is not replayed yet; lag: no replica fresh enough; fallback: the replica failed the read; none: no replicas).',
    labelNames: ['served_by'],
    registers: [registry],
    collect() {
      const reads = sources.replicas?.()?.reads;
      this.reset();
      if (!reads) return;
      for (const [served, n] of Object.entries(reads)) this.inc({ served_by: served }, n);
    },
  });
  new client.Gauge({
    name: 'plinth_password_hashes',
    help: 'Password hashes and verifies (argon2id) of this process: running now, and waiting for a turn (PASSWORD_HASH_CONCURRENCY).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      for (const [state, n] of Object.entries(passwordHashing())) this.set({ state }, n);
    },
  });
  const jobGauge = (name: string, help: string, pick: (s: JobQueueStats) => number) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const stats = await sources.jobs().catch(() => null);
        if (stats) this.set(pick(stats));
        else this.reset(); // unknown now: no sample rather than a stale one
      },
    });
  jobGauge('plinth_jobs_ready', 'Background jobs due now and not taken by a worker (the whole database, not this process).', (s) => s.ready);
  jobGauge('plinth_jobs_locked', 'Background jobs a worker holds now.', (s) => s.locked);
  jobGauge('plinth_jobs_failed', 'Background jobs that used up their attempts.', (s) => s.failed);
  jobGauge('plinth_jobs_oldest_ready_age_seconds', 'How long the oldest ready job has been due (0 when none is).', (s) => s.oldestReadyAgeSeconds);
  const mail = (name: string, help: string) => new client.Counter({ name, help, labelNames: ['sender'], registers: [registry] });
  const sent = mail('plinth_mail_sent_total', 'Mails the provider accepted, by sender (default, byok, outbox).');
  const failed = mail('plinth_mail_failed_total', 'Mails marked failed for good (permanent provider error or last attempt).');
  const retried = mail('plinth_mail_retries_total', 'Transient provider failures left to a later attempt.');
  const watchWorker = workerMetrics(registry);

  return {
    registry,
    observeRequest(method, route, status, seconds) {
      const labels = { method, route: route ?? 'unmatched', status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
    countError: (code, status) => errors.inc({ code, status: String(status) }),
    mailSent: (sender) => sent.inc({ sender }),
    mailFailed: (sender) => failed.inc({ sender }),
    mailRetried: (sender) => retried.inc({ sender }),
    watchWorker,
  };
}

/** The job worker's gauges and restart counter; no samples in a process without a worker. */
function workerMetrics(registry: client.Registry): (source: () => WorkerHealthSample) => void {
  let source: (() => WorkerHealthSample) | undefined;
  let counted = 0;
  new client.Counter({
    name: 'plinth_worker_runner_restarts_total',
    help: 'Times this process started fresh job runners because one had stopped (e.g. it could not record a job while PostgreSQL was away).',
    registers: [registry],
    collect() {
      const s = source?.();
      if (s && s.restarts > counted) this.inc(s.restarts - counted);
      if (s) counted = s.restarts;
    },
  });
  new client.Gauge({
    name: 'plinth_worker_up',
    help: 'Whether this process\'s job worker can run jobs now: 1, or 0 while the database is away or runners are missing.',
    registers: [registry],
    collect() {
      const s = source?.();
      if (s) this.set(s.ok ? 1 : 0);
      else this.reset();
    },
  });
  new client.Gauge({
    name: 'plinth_worker_runners',
    help: 'Job runners of this process: running now, configured (WORKER_CONCURRENCY), and stopped with jobs not yet released (orphaned).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const s = source?.();
      if (!s) return this.reset();
      this.set({ state: 'running' }, s.runners);
      this.set({ state: 'configured' }, s.concurrency);
      this.set({ state: 'orphaned' }, s.orphans);
    },
  });
  return (fn) => {
    source = fn;
  };
}

/**
 * Wraps a scrape-time source so that scrapes from several Prometheus servers (or a fast
 * interval) cost the database one query per `ttlMs`. Measured on the monotonic clock: the
 * app's Clock may be a test's frozen one.
 */
export function cached<T>(load: () => Promise<T>, ttlMs: number): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = performance.now();
    if (!last || now - last.at >= ttlMs) {
      const entry = { at: now, value: load() };
      last = entry;
      entry.value.catch(() => {
        if (last === entry) last = undefined; // a failure is not remembered
      });
    }
    return last.value;
  };
}
