/**
 * Group commit for single-row statements. Requests that write the same kind of row in the same
 * tenant scope are sent as one statement instead of one each: the first request of a key runs
 * at once (no added latency when idle); requests that arrive while it is in flight wait and
 * then go together, up to `maxBatch`, as the next statement. Under load this turns N round
 * trips, N parse/bind/execute cycles and N commits into one of each.
 *
 * `execute` answers one result per item, in order. If a batch fails as a whole, its items are
 * retried one by one, so a bad item fails alone and the others still get their own answer
 * (so `execute` must fail atomically: one statement or one transaction).
 */
export type BatchExecutor<K, I, O> = (key: K, items: I[]) => Promise<O[]>;

interface Waiter<I, O> {
  item: I;
  resolve: (out: O) => void;
  reject: (err: unknown) => void;
}

interface Lane<K, I, O> {
  key: K;
  waiting: Waiter<I, O>[];
}

export class Coalescer<K, I, O> {
  /** Keys with a batch in flight; a lane is removed once nothing is left to send for it. */
  private lanes = new Map<string, Lane<K, I, O>>();

  constructor(
    private execute: BatchExecutor<K, I, O>,
    private keyString: (key: K) => string,
    private maxBatch = 64,
  ) {}

  /**
   * One batch in flight per key: letting two or four go at once was measured (storage bench)
   * and gave no more throughput, only smaller batches.
   */
  submit(key: K, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const id = this.keyString(key);
      const lane = this.lanes.get(id);
      if (lane) return void lane.waiting.push({ item, resolve, reject });
      const fresh: Lane<K, I, O> = { key, waiting: [{ item, resolve, reject }] };
      this.lanes.set(id, fresh);
      void this.drain(id, fresh);
    });
  }

  private async drain(id: string, lane: Lane<K, I, O>): Promise<void> {
    while (lane.waiting.length > 0) {
      const batch = lane.waiting.splice(0, this.maxBatch);
      await this.send(lane.key, batch);
    }
    this.lanes.delete(id);
  }

  private async send(key: K, batch: Waiter<I, O>[]): Promise<void> {
    let out: O[];
    try {
      out = await this.execute(key, batch.map((w) => w.item));
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      for (const w of batch) await this.send(key, [w]);
      return;
    }
    // A miscounted answer is a bug in `execute`, not a bad item: the batch may have been
    // applied, so it is not sent again.
    if (out.length !== batch.length) {
      const err = new Error(`batch answered ${out.length} results for ${batch.length} items`);
      return batch.forEach((w) => w.reject(err));
    }
    batch.forEach((w, i) => w.resolve(out[i]!));
  }
}
