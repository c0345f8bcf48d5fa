/**
 * Per-node allowances over a quota counter. Instead of one counter round trip per write, a
 * node reserves a chunk ahead (guarded, like every reservation) and spends it locally; near
 * the limit it falls back to exact per-write reservations. Nothing can overspend: every byte
 * spent was reserved under the guard. Usage may read up to one chunk per node and project
 * ahead of what is stored; `release` gives unspent allowance back (at shutdown).
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
    const key = `${counter.subjectId}:${counter.metric}:${counter.period ?? ''}`;
    let e = this.allowance.get(key);
    if (!e) this.allowance.set(key, (e = { counter, bytes: 0, pending: null }));
    return e;
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
