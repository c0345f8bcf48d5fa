/** Group commit: what batches together, what stays apart, and how a failing item is isolated. */
import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../src/lib/coalescer.js';

/** An executor that records each batch and answers after the test releases it. */
function recorder(answer: (key: string, items: number[]) => number[] = (_k, items) => items.map((i) => i * 10)) {
  const batches: Array<{ key: string; items: number[] }> = [];
  const gates: Array<() => void> = [];
  const coalescer = new Coalescer<string, number, number>(
    async (key, items) => {
      batches.push({ key, items });
      await new Promise<void>((resolve) => gates.push(resolve));
      return answer(key, items);
    },
    (k) => k,
    3,
  );
  const openNext = async () => {
    while (gates.length === 0) await new Promise((r) => setImmediate(r));
    gates.shift()!();
  };
  return { coalescer, batches, openNext };
}

describe('Coalescer', () => {
  it('sends the first item at once and everything that arrived meanwhile as the next batch', async () => {
    const { coalescer, batches, openNext } = recorder();
    const results = [1, 2, 3, 4, 5, 6].map((i) => coalescer.submit('a', i));
    await openNext(); // [1]
    await openNext(); // [2, 3, 4]: capped at maxBatch
    await openNext(); // [5, 6]
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40, 50, 60]);
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it('never mixes keys: each key has its own batches, run side by side', async () => {
    const { coalescer, batches, openNext } = recorder();
    const a = coalescer.submit('a', 1);
    const b = coalescer.submit('b', 2);
    await openNext();
    await openNext();
    expect(await Promise.all([a, b])).toEqual([10, 20]);
    expect(batches).toEqual([{ key: 'a', items: [1] }, { key: 'b', items: [2] }]);
  });

  it('a failing batch is retried item by item: only the bad item fails', async () => {
    const { coalescer, batches, openNext } = recorder((_k, items) => {
      if (items.includes(3)) throw new Error('bad item 3');
      return items.map((i) => i * 10);
    });
    const first = coalescer.submit('a', 1);
    const rest = [2, 3, 4].map((i) => coalescer.submit('a', i).catch((e: Error) => e.message));
    for (let i = 0; i < 5; i++) await openNext(); // [1], [2,3,4] fails, then [2], [3], [4]
    expect(await first).toBe(10);
    expect(await Promise.all(rest)).toEqual([20, 'bad item 3', 40]);
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });

  it('a miscounted answer rejects its batch without sending it again (it may have been applied)', async () => {
    const { coalescer, batches, openNext } = recorder((_k, items) => items.slice(1).map((i) => i * 10));
    const first = coalescer.submit('a', 1).catch((e: Error) => e.message);
    const rest = [2, 3].map((i) => coalescer.submit('a', i).catch((e: Error) => e.message));
    await openNext(); // [1]: answered with no result
    await openNext(); // [2, 3]: answered with one
    expect(await first).toBe('batch answered 0 results for 1 items');
    expect(await Promise.all(rest)).toEqual(['batch answered 1 results for 2 items', 'batch answered 1 results for 2 items']);
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3]]);
  });

  it('starts afresh once a key has drained (no batch waits on a finished one)', async () => {
    const { coalescer, batches, openNext } = recorder();
    const one = coalescer.submit('a', 1);
    await openNext();
    await one;
    const two = coalescer.submit('a', 2);
    await openNext();
    expect(await two).toBe(20);
    expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
  });
});
