/**
 * Per-node allowances over a quota counter. Instead of one counter round trip per write, a
 * node reserves a chunk ahead (guarded, like every reservation) and spends it locally; near
 * the limit it falls back to exact per-write reservations. Nothing can overspend: every byte
 * spent was reserved under the guard. Once its writes have finished, a node holds at most two
 * chunks per project ahead of what is stored (`trim`), which usage may read as used;
 * `release` gives the rest back at shutdown.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import { refundAhead, reserveAhead, type Counter } from './quota-queries.js';

/** How far ahead a node reserves: the most a counter can read above what is stored, per node. */
export const LEASE_CHUNK = 16 * 1024;

interface Allowance {
  counter: Counter;
  bytes: number;
  /** The reservation in flight for this counter: one at a time per node, others wait for it. */
  pending: Promise<void> | null;
}

const keyOf = (counter: Counter) => `${counter.subjectId}:${counter.metric}:${counter.period ?? ''}`;

export class QuotaLeases {
  private allowance = new Map<string, Allowance>();

  constructor(private chunk = LEASE_CHUNK) {}

  /** Takes `amount` for a write; false when the limit does not allow it. Outside a transaction. */
  async take(db: Kysely<Database>, counter: Counter, amount: number, limit: number): Promise<boolean> {
    if (amount <= 0) return true;
    const entry = this.entry(counter);
    for (;;) {
      if (entry.bytes >= amount) {
        entry.bytes -= amount;
        return true;
      }
      if (entry.pending) {
        await entry.pending;
        continue;
      }
      if (!(await this.topUp(db, entry, amount - entry.bytes, limit))) return false;
    }
  }

  /** Reserves what is missing plus a chunk, or (near the limit) exactly what is missing. */
  private async topUp(db: Kysely<Database>, entry: Allowance, missing: number, limit: number): Promise<boolean> {
    let done!: () => void;
    entry.pending = new Promise<void>((resolve) => (done = resolve));
    try {
      for (const want of [missing + this.chunk, missing]) {
        if ((await reserveAhead(db, entry.counter, want, limit)) !== null) {
          entry.bytes += want;
          return true;
        }
      }
      return false;
    } finally {
      entry.pending = null;
      done();
    }
  }

  private entry(counter: Counter): Allowance {
    const key = keyOf(counter);
    let e = this.allowance.get(key);
    if (!e) this.allowance.set(key, (e = { counter, bytes: 0, pending: null }));
    return e;
  }

  /** Whether the allowance has grown past two chunks: `trim` would give some back. */
  overflows(counter: Counter): boolean {
    return (this.allowance.get(keyOf(counter))?.bytes ?? 0) > 2 * this.chunk;
  }

  /**
   * Gives back to the counter all but one chunk of an allowance grown past two. Concurrent
   * writes each take their size bound and return what they did not use, so a burst of large
   * writes would otherwise leave the node holding their sum: usage would read it as used, and
   * no other node could spend it. The margin keeps this off the path of ordinary writes. A
   * failed refund keeps the bytes here (still reserved, nothing lost) and fails no write.
   */
  async trim(db: Kysely<Database>, counter: Counter): Promise<void> {
    if (!this.overflows(counter)) return;
    const entry = this.entry(counter);
    const excess = entry.bytes - this.chunk;
    entry.bytes -= excess;
    await refundAhead(db, counter, excess).catch(() => {
      entry.bytes += excess;
    });
  }

  /** Returns the bytes a failed write had taken to this node's allowance. */
  give(counter: Counter, amount: number): void {
    if (amount > 0) this.entry(counter).bytes += amount;
  }

  /** Gives every unspent allowance back to the counters. */
  async release(db: Kysely<Database>): Promise<void> {
    const entries = [...this.allowance.values()];
    this.allowance.clear();
    for (const e of entries) if (e.bytes > 0) await refundAhead(db, e.counter, e.bytes);
  }
}
