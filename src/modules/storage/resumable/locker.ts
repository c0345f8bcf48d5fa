/**
 * A tus Locker shared by every node: a lease row per upload in PostgreSQL (upload_locks), taken
 * in autocommit and renewed while the request runs, so no transaction or connection is held
 * across a PATCH. A request that wants a held upload flags it; the holder's next renewal sees
 * the flag and ends its request (tus's `requestRelease`), which is how a client that lost its
 * connection and resumes on another node gets the upload back within about one renewal. A
 * holder that died simply lets its lease run out.
 */
import { randomUUID } from 'node:crypto';
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/utils';
import type { Kysely } from 'kysely';
import type { Database } from '../../../database.js';
import { askRelease, dropLease, renewLease, takeLease } from './queries.js';

export interface LeaseTimings {
  /** A lease's life without renewal. */
  ttlMs: number;
  /** How often a holder renews (and looks for a release request). */
  renewMs: number;
  /** How long a request waits for a held upload before 423-ish ERR_LOCK_TIMEOUT. */
  acquireTimeoutMs: number;
  /** Pause between attempts while waiting. */
  retryMs: number;
}

export const DEFAULT_LEASE: LeaseTimings = { ttlMs: 10_000, renewMs: 1000, acquireTimeoutMs: 20_000, retryMs: 100 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class PgLease implements Lock {
  private readonly holder = randomUUID();
  private timer: NodeJS.Timeout | null = null;

  constructor(private db: Kysely<Database>, private id: string, private t: LeaseTimings, private onError: (err: unknown) => void) {}

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    const deadline = Date.now() + this.t.acquireTimeoutMs;
    let asked = false;
    while (!(await takeLease(this.db, this.id, this.holder, this.t.ttlMs))) {
      if (signal.aborted || Date.now() > deadline) throw ERRORS.ERR_LOCK_TIMEOUT;
      if (!asked) await askRelease(this.db, this.id);
      asked = true;
      await sleep(this.t.retryMs);
    }
    this.timer = setInterval(() => void this.renew(requestRelease), this.t.renewMs);
    this.timer.unref();
  }

  private async renew(requestRelease: RequestRelease): Promise<void> {
    try {
      const wanted = await renewLease(this.db, this.id, this.holder, this.t.ttlMs);
      if (wanted !== false) await requestRelease();
    } catch (err) {
      this.onError(err);
    }
  }

  async unlock(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await dropLease(this.db, this.id, this.holder);
  }
}

export class PgLocker implements Locker {
  constructor(private db: Kysely<Database>, private timings: LeaseTimings = DEFAULT_LEASE, private onError: (err: unknown) => void = () => {}) {}

  newLock(id: string): Lock {
    return new PgLease(this.db, id, this.timings, this.onError);
  }
}
