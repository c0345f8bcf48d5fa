/**
 * The sandbox channel's framing (outbox.ts): messages queued in one turn of the event loop go
 * as one write, in order; what a hostile sandbox sends that is not a message or a batch of
 * messages is dropped rather than thrown in the API process.
 */
import { describe, expect, it } from 'vitest';
import { Outbox, unbatch } from '../../../src/modules/functions/sandbox/outbox.js';

const turn = () => new Promise((r) => setImmediate(r));

describe('the sandbox channel outbox', () => {
  it('writes the messages of one turn once, as a batch, in order', async () => {
    const writes: unknown[] = [];
    const outbox = new Outbox<{ t: string; n: number }>((m) => writes.push(m));
    outbox.send({ t: 'a', n: 1 });
    outbox.send({ t: 'a', n: 2 });
    outbox.send({ t: 'a', n: 3 });
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toEqual([{ t: 'batch', msgs: [{ t: 'a', n: 1 }, { t: 'a', n: 2 }, { t: 'a', n: 3 }] }]);
    expect(unbatch(writes[0])).toEqual([{ t: 'a', n: 1 }, { t: 'a', n: 2 }, { t: 'a', n: 3 }]);
  });

  it('writes a lone message as itself, and a later turn separately', async () => {
    const writes: unknown[] = [];
    const outbox = new Outbox<{ t: string }>((m) => writes.push(m));
    outbox.send({ t: 'one' });
    await turn();
    outbox.send({ t: 'two' });
    await turn();
    expect(writes).toEqual([{ t: 'one' }, { t: 'two' }]);
  });
});

describe('what arrives from a sandbox that is not a message', () => {
  it.each<[string, unknown, unknown[]]>([
    ['null', null, []],
    ['a string', 'done', []],
    ['a number', 7, []],
    ['a batch whose msgs is not an array', { t: 'batch', msgs: { 0: { t: 'done' } } }, []],
    ['a batch holding non-objects', { t: 'batch', msgs: [null, 1, 'x', { t: 'done', id: 1 }] }, [{ t: 'done', id: 1 }]],
    ['a batch inside a batch', { t: 'batch', msgs: [{ t: 'batch', msgs: [{ t: 'done', id: 2 }] }] }, []],
  ])('%s is dropped', (_what, arrived, kept) => {
    expect(unbatch(arrived)).toEqual(kept);
  });
});
