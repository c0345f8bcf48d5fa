/**
 * The usage counters of one node (docs/dashboard.md "Usage history"). A finished request adds
 * one to a slot of its project's array for the current UTC hour (a Map lookup and an increment:
 * no database call, no promise, no string built on the request's path); function invocations,
 * AI calls and realtime peaks the same way. Every USAGE_FLUSH_MS the node adds what it counted
 * to the hourly table in one statement (an upsert that adds, whatever the number of projects).
 * A batch whose write fails is merged back and tried again with the next one (counts are
 * small: one array per project and hour), up to MAX_PENDING_HOURS hours; older hours are
 * dropped and counted. Lost only if the node dies between two flushes.
 */
import client from 'prom-client';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../database.js';
import { objectId } from '../../lib/ids.js';
import { COUNTED, PEAK_METRIC, REQUEST_GROUPS, type CountedMetric } from './metrics.js';
import { addCounts, type CountColumns } from './queries.js';

const HOUR = 3600_000;
const SLOTS = COUNTED.length + 1;
const PEAK_SLOT = COUNTED.length;
const SLOT_OF = new Map<string, number>(COUNTED.map((m, i) => [m, i]));
/** A route group's first request slot (its 2xx; 4xx and 5xx follow). */
const GROUP_BASE: Record<string, number> = Object.fromEntries(REQUEST_GROUPS.map((g, i) => [g, i * 3]));
/** Hours kept while the database is away; older ones are dropped. */
const MAX_PENDING_HOURS = 48;
const WARN_EVERY_MS = 60_000;

type Hour = Map<string, Float64Array>;

export interface UsageCountersOptions {
  db: Kysely<Database>;
  log: Logger;
  registry?: client.Registry;
  /** USAGE_COUNTERS: when false, nothing is counted (the request hook is not even installed). */
  enabled: boolean;
  flushMs: number;
  /** Milliseconds since the epoch (the context's clock). */
  now?: () => number;
  /** Open realtime streams per project on this node, read at each flush and each new hour. */
  openStreams?: () => Iterable<[string, number]>;
}

export class UsageCounters {
  /** This node's name in the peaks' rows (a restart is a new node: its peak starts again). */
  readonly node = objectId();
  readonly now: () => number;
  readonly stats = { flushes: 0, failed: 0, droppedHours: 0 };
  #hour = -1;
  #hourEnd = 0;
  #current: Hour = new Map();
  /** Earlier hours not written yet (the turn of an hour, or a failed write). */
  #pending = new Map<number, Hour>();
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> | null = null;
  #closed = false;
  #lastWarn = 0;
  readonly #failed: client.Counter;

  constructor(private readonly opts: UsageCountersOptions) {
    this.now = opts.now ?? Date.now;
    this.#failed = new client.Counter({
      name: 'plinth_usage_flush_failed_total',
      help: 'Usage counter batches whose write failed (merged back and retried with the next).',
      registers: opts.registry ? [opts.registry] : [],
    });
  }

  get enabled(): boolean {
    return this.opts.enabled && !this.#closed;
  }

  #slots(projectId: string): Float64Array {
    const now = this.now();
    if (now >= this.#hourEnd || now < this.#hourEnd - HOUR) this.#roll(now);
    let slots = this.#current.get(projectId);
    if (slots === undefined) {
      slots = new Float64Array(SLOTS);
      this.#current.set(projectId, slots);
      if (this.#timer === null && !this.#closed) this.#arm();
    }
    return slots;
  }

  /** One answered app-traffic request: its route group (`config.auth`) and status. */
  request(projectId: string, group: string | undefined, status: number): void {
    const base = GROUP_BASE[group ?? ''];
    if (base === undefined) return;
    this.#slots(projectId)[base + (status >= 500 ? 2 : status >= 400 ? 1 : 0)]!++;
  }

  add(projectId: string, metric: CountedMetric, n = 1): void {
    if (!this.enabled) return;
    this.#slots(projectId)[SLOT_OF.get(metric)!]! += n;
  }

  /** A realtime stream count seen now on this node: the hour keeps the highest. */
  peak(projectId: string, open: number): void {
    if (!this.enabled) return;
    const slots = this.#slots(projectId);
    if (open > slots[PEAK_SLOT]!) slots[PEAK_SLOT] = open;
  }

  #roll(now: number): void {
    if (this.#current.size > 0) this.#merge(this.#hour, this.#current);
    this.#current = new Map();
    this.#hour = Math.floor(now / HOUR);
    this.#hourEnd = (this.#hour + 1) * HOUR;
    this.#samplePeaks(); // the streams still open start the new hour's peak
  }

  #samplePeaks(): void {
    if (!this.opts.openStreams || !this.enabled) return;
    for (const [projectId, open] of this.opts.openStreams()) {
      let slots = this.#current.get(projectId);
      if (slots === undefined) this.#current.set(projectId, (slots = new Float64Array(SLOTS)));
      if (open > slots[PEAK_SLOT]!) slots[PEAK_SLOT] = open;
    }
  }

  #merge(hour: number, counts: Hour): void {
    let into = this.#pending.get(hour);
    if (!into) this.#pending.set(hour, (into = new Map()));
    for (const [projectId, slots] of counts) {
      const prior = into.get(projectId);
      if (!prior) {
        into.set(projectId, slots);
        continue;
      }
      for (let i = 0; i < SLOTS; i++) prior[i] = i === PEAK_SLOT ? Math.max(prior[i]!, slots[i]!) : prior[i]! + slots[i]!;
    }
    if (this.#pending.size > MAX_PENDING_HOURS) {
      const oldest = Math.min(...this.#pending.keys());
      this.#pending.delete(oldest);
      this.stats.droppedHours++;
    }
  }

  #arm(): void {
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.flush();
    }, this.opts.flushMs);
    this.#timer.unref();
  }

  /** Hours waiting on this node, the current one included (tests). */
  get pendingProjects(): number {
    let n = this.#current.size;
    for (const h of this.#pending.values()) n += h.size;
    return n;
  }

  /** Writes everything counted so far; resolves once written (or merged back after a failure). */
  flush(): Promise<void> {
    if (this.#flushing) return this.#flushing.then(() => this.flush());
    const now = this.now();
    if (now >= this.#hourEnd || now < this.#hourEnd - HOUR) this.#roll(now);
    this.#samplePeaks();
    if (this.#current.size > 0) this.#merge(this.#hour, this.#current);
    this.#current = new Map();
    if (this.#pending.size === 0) return Promise.resolve();
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    const batch = this.#pending;
    this.#pending = new Map();
    this.#flushing = this.#write(batch).finally(() => {
      this.#flushing = null;
      if (this.pendingProjects > 0 && this.#timer === null && !this.#closed) this.#arm();
    });
    return this.#flushing;
  }

  async #write(batch: Map<number, Hour>): Promise<void> {
    const cols: CountColumns = { projectIds: [], hours: [], metrics: [], nodes: [], values: [] };
    for (const [hour, projects] of batch) {
      for (const [projectId, slots] of projects) {
        for (let i = 0; i < SLOTS; i++) {
          const v = slots[i]!;
          if (v === 0) continue;
          cols.projectIds.push(projectId);
          cols.hours.push(hour);
          cols.metrics.push(i === PEAK_SLOT ? PEAK_METRIC : COUNTED[i]!);
          cols.nodes.push(i === PEAK_SLOT ? this.node : '');
          cols.values.push(v);
        }
      }
    }
    if (cols.projectIds.length === 0) return;
    try {
      await addCounts(this.opts.db, cols);
      this.stats.flushes++;
    } catch (err) {
      this.stats.failed++;
      this.#failed.inc();
      for (const [hour, projects] of batch) this.#merge(hour, projects);
      const now = Date.now();
      if (now - this.#lastWarn >= WARN_EVERY_MS) {
        this.#lastWarn = now;
        this.opts.log.warn({ err, rows: cols.projectIds.length }, 'usage counters: a batch could not be written, kept for the next');
      }
    }
  }

  /** Shutdown: writes what is counted, then counts no more. */
  async close(): Promise<void> {
    await this.flush();
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
