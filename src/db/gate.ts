/**
 * The noisy-neighbour guard of the tenant pool: at most `max` tenant calls (`db.tenant` /
 * `db.read`) of one project hold a connection at once. A call beyond that waits its turn (first
 * come, first served) for at most `waitMs`, then fails with 429 `project_busy` and Retry-After,
 * so one project flooding slow queries (a catastrophic `_regex`, say) can take at most `max`
 * connections of the shared pool, and the other projects keep theirs.
 */
import { AppError, Errors } from '../lib/errors.js';

interface Waiter {
  grant(): void;
}

interface Lane {
  running: number;
  queue: Waiter[];
}

export class ProjectGate {
  private lanes = new Map<string, Lane>();

  /** `maxQueue`: waiters per project beyond which a call is refused at once (bounded memory). */
  constructor(
    private readonly max: number,
    private readonly waitMs: number,
    private readonly maxQueue = Math.max(100, max * 20),
  ) {}

  /** Waits for a slot of `key`'s project; call the returned function exactly once to free it. */
  async enter(key: string): Promise<() => void> {
    const lane = this.lanes.get(key) ?? { running: 0, queue: [] };
    this.lanes.set(key, lane);
    if (lane.running < this.max) {
      lane.running++;
      return this.leaver(key, lane);
    }
    if (lane.queue.length >= this.maxQueue) throw busy();
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        lane.queue.splice(lane.queue.indexOf(waiter), 1);
        reject(busy());
      }, this.waitMs);
      lane.queue.push(waiter);
    });
    return this.leaver(key, lane); // the slot was handed over by the call that left
  }

  /** Calls of `key` holding a slot now (tests, metrics). */
  running(key: string): number {
    return this.lanes.get(key)?.running ?? 0;
  }

  private leaver(key: string, lane: Lane): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = lane.queue.shift();
      if (next) return next.grant(); // the slot passes on: running stays the same
      lane.running--;
      if (lane.running === 0) this.lanes.delete(key);
    };
  }
}

function busy(): AppError {
  return Errors.project_busy(undefined, undefined, { headers: { 'retry-after': '1' } });
}
