/**
 * The request log's writer on one API node. A request that finishes adds its row here (eight
 * array pushes: no database call, no promise, no serialisation on the request's path); the
 * node writes what it holds in one INSERT every REQUEST_LOG_FLUSH_MS, sooner once `batchRows`
 * are waiting. The buffer is bounded: when REQUEST_LOG_BUFFER_ROWS rows are waiting (the
 * database is slow or away), further rows are dropped and counted, never held, never a delay
 * or an error for the request. A batch whose write fails is dropped and counted too (no
 * retry: the log is a diagnostic, the next batch tries again). Why a table written in batches
 * and not a ring buffer per node: docs/dashboard.md "Request log".
 */
import client from 'prom-client';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../database.js';
import { insertRequests, type RequestColumns } from './queries.js';

/**
 * Which requests the log keeps: app traffic, the routes served to a project's API key (the
 * `apiKey`, `secretKey` and `endUser` groups of src/route-groups.ts), read from the routed
 * route's config, never the URL. A `:projectId` route in the operator group is the console's,
 * even when it is served with the public API (the live view's realtime ticket), and is not kept.
 */
const APP_GROUPS: ReadonlySet<string | undefined> = new Set(['apiKey', 'secretKey', 'endUser']);
export const isAppTraffic = (routeConfig: { surface?: string; auth?: string }): boolean =>
  routeConfig.surface === 'public' && APP_GROUPS.has(routeConfig.auth);

export interface RequestLogOptions {
  db: Kysely<Database>;
  log: Logger;
  /** Where the counters go (the node's metrics registry). */
  registry?: client.Registry;
  flushMs: number;
  /** Most rows waiting to be written; beyond, rows are dropped. */
  bufferRows: number;
  /** A write starts at once when this many rows wait. */
  batchRows?: number;
  /** Milliseconds since the epoch (the context's clock). */
  now?: () => number;
}

const empty = (): RequestColumns => ({ projectIds: [], at: [], methods: [], routes: [], statuses: [], durations: [], codes: [], userIds: [] });

/** Failures are logged at most this often (an outage would otherwise log once per second). */
const WARN_EVERY_MS = 60_000;

export class RequestLog {
  #rows = empty();
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> | null = null;
  #lastWarn = 0;
  #closed = false;
  readonly #batchRows: number;
  readonly #dropped: client.Counter<'reason'>;
  readonly #written: client.Counter;
  /** Rows dropped (buffer full, or their write failed) and written, since start. */
  readonly stats = { dropped: 0, written: 0 };
  readonly now: () => number;

  constructor(private readonly opts: RequestLogOptions) {
    this.#batchRows = Math.min(opts.batchRows ?? 1000, opts.bufferRows);
    this.now = opts.now ?? Date.now;
    const registers = opts.registry ? [opts.registry] : [];
    this.#dropped = new client.Counter({
      name: 'plinth_request_log_dropped_total',
      help: 'Request log rows not written: the node buffer was full, or their batch failed to write.',
      labelNames: ['reason'],
      registers,
    });
    this.#written = new client.Counter({ name: 'plinth_request_log_written_total', help: 'Request log rows written.', registers });
  }

  /** Rows waiting on this node. */
  get pending(): number {
    return this.#rows.projectIds.length;
  }

  /**
   * One finished request. `at`: when it arrived (ms). Never throws, never waits.
   */
  record(projectId: string, at: number, method: string, route: string, status: number, durationMs: number, code: string | null, userId: string | null): void {
    const r = this.#rows;
    const n = r.projectIds.length;
    if (n >= this.opts.bufferRows || this.#closed) {
      this.stats.dropped++;
      this.#dropped.inc({ reason: 'buffer_full' });
      return;
    }
    r.projectIds.push(projectId);
    r.at.push(at);
    r.methods.push(method);
    r.routes.push(route);
    r.statuses.push(status);
    r.durations.push(durationMs);
    r.codes.push(code);
    r.userIds.push(userId);
    if (this.#flushing) return; // its end schedules the next write
    if (n + 1 >= this.#batchRows) this.#schedule(0);
    else if (!this.#timer) this.#schedule(this.opts.flushMs);
  }

  #schedule(ms: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.flush();
    }, ms);
    this.#timer.unref();
  }

  /** Writes every waiting row now (tests, shutdown); resolves once written or dropped. */
  flush(): Promise<void> {
    if (this.#flushing) return this.#flushing.then(() => (this.pending > 0 ? this.flush() : undefined));
    if (this.pending === 0) return Promise.resolve();
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    const batch = this.#rows;
    this.#rows = empty();
    this.#flushing = this.#write(batch).finally(() => {
      this.#flushing = null;
      const n = this.pending;
      if (n > 0 && !this.#closed) this.#schedule(n >= this.#batchRows ? 0 : this.opts.flushMs);
    });
    return this.#flushing;
  }

  async #write(batch: RequestColumns): Promise<void> {
    const n = batch.projectIds.length;
    try {
      await insertRequests(this.opts.db, batch);
      this.stats.written += n;
      this.#written.inc(n);
    } catch (err) {
      this.stats.dropped += n;
      this.#dropped.inc({ reason: 'write_failed' }, n);
      const now = Date.now();
      if (now - this.#lastWarn >= WARN_EVERY_MS) {
        this.#lastWarn = now;
        this.opts.log.warn({ err, rows: n }, 'request log: a batch could not be written and was dropped');
      }
    }
  }

  /** Shutdown: writes what is waiting, then takes no more rows. */
  async close(): Promise<void> {
    await this.flush();
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
