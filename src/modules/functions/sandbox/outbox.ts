/**
 * Messages to the other side of a sandbox's IPC channel, written once per turn of the event
 * loop: every message queued in the same turn goes as one `{t: 'batch'}` (protocol.ts). Each
 * write is a system call in both processes; with a sandbox's invocations overlapping, this cut
 * the API process's CPU per function call (docs/functions.md "Throughput").
 */
import type { Batch } from './protocol.js';

export class Outbox<T> {
  #queued: T[] = [];
  #scheduled = false;

  /** `write` sends one channel message (the process's or the child's `send`). */
  constructor(private write: (msg: T | Batch<T>) => void) {}

  send(msg: T): void {
    this.#queued.push(msg);
    if (this.#scheduled) return;
    this.#scheduled = true;
    // setImmediate: after this turn's I/O callbacks, so replies to all of them share one write.
    setImmediate(() => this.flush());
  }

  flush(): void {
    this.#scheduled = false;
    const msgs = this.#queued;
    if (msgs.length === 0) return;
    this.#queued = [];
    this.write(msgs.length === 1 ? msgs[0]! : { t: 'batch', msgs });
  }
}

/** The messages in what arrived: one, or a batch's (anything else from a hostile side is dropped). */
export function unbatch<T extends { t: string }>(msg: unknown): T[] {
  if (!msg || typeof msg !== 'object') return [];
  const m = msg as { t?: unknown; msgs?: unknown };
  if (m.t !== 'batch') return [msg as T];
  return Array.isArray(m.msgs) ? (m.msgs as unknown[]).filter((x): x is T => !!x && typeof x === 'object' && (x as { t?: unknown }).t !== 'batch') : [];
}
