/**
 * The sealed stream of stored backups (src/lib/sealed-stream.ts): it round-trips any length in
 * bounded frames, hides the plaintext, and refuses every change an attacker with the stored
 * bytes could make: a flipped bit, a cut, frames dropped, swapped or appended, another key or
 * another project's context.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openStream, sealStream, SEALED_HEADER_BYTES } from '../../src/lib/sealed-stream.js';

const KEY = randomBytes(32);
const CHUNK = 1024;
const FRAME = 4 + CHUNK + 16;

async function collect(r: Readable): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of r) out.push(c as Buffer);
  return Buffer.concat(out);
}

const seal = (plain: Buffer, context = 'p1', pieces = 7) => {
  const parts: Buffer[] = [];
  for (let i = 0; i < plain.length; i += pieces) parts.push(plain.subarray(i, i + pieces));
  return collect(Readable.from(parts.length ? parts : []).pipe(sealStream(KEY, context, CHUNK)));
};
const open = (sealed: Buffer, key = KEY, context = 'p1') => collect(Readable.from([sealed]).pipe(openStream(key, context)));

describe('sealed stream', () => {
  it('round-trips empty, exact-multiple and ragged lengths, fed in any pieces', async () => {
    for (const n of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 5 * CHUNK, 5 * CHUNK + 17]) {
      const plain = randomBytes(n);
      const sealed = await seal(plain);
      expect(sealed.length).toBe(SEALED_HEADER_BYTES + Math.max(1, Math.ceil(n / CHUNK)) * 20 + n);
      expect((await open(sealed)).equals(plain)).toBe(true);
    }
  });

  it('hides the plaintext, and two seals of the same bytes differ', async () => {
    const plain = Buffer.from('the quick brown fox '.repeat(200));
    const a = await seal(plain);
    const b = await seal(plain);
    expect(a.includes(Buffer.from('quick brown'))).toBe(false);
    expect(a.equals(b)).toBe(false);
  });

  it('refuses a flipped bit, a cut, dropped, swapped or appended frames, another key or context', async () => {
    const plain = randomBytes(4 * CHUNK + 10);
    const sealed = await seal(plain);
    const frame = (i: number) => sealed.subarray(SEALED_HEADER_BYTES + i * FRAME, SEALED_HEADER_BYTES + (i + 1) * FRAME);
    const header = sealed.subarray(0, SEALED_HEADER_BYTES);
    const flipped = Buffer.from(sealed);
    flipped[SEALED_HEADER_BYTES + 100]! ^= 1;
    const cases: Record<string, Promise<Buffer>> = {
      flipped: open(flipped),
      cutMidFrame: open(sealed.subarray(0, sealed.length - 5)),
      cutAtFrame: open(sealed.subarray(0, SEALED_HEADER_BYTES + 2 * FRAME)),
      dropped: open(Buffer.concat([header, frame(0), frame(2), frame(3), sealed.subarray(SEALED_HEADER_BYTES + 4 * FRAME)])),
      swapped: open(Buffer.concat([header, frame(1), frame(0), sealed.subarray(SEALED_HEADER_BYTES + 2 * FRAME)])),
      appended: open(Buffer.concat([sealed, frame(0)])),
      headerSwapped: seal(plain).then((other) => open(Buffer.concat([other.subarray(0, SEALED_HEADER_BYTES), sealed.subarray(SEALED_HEADER_BYTES)]))),
      otherKey: open(sealed, randomBytes(32)),
      otherContext: open(sealed, KEY, 'p2'),
      notSealed: open(Buffer.from('plain gzip bytes, not sealed at all, long enough for a header......')),
    };
    for (const [name, p] of Object.entries(cases)) await expect(p, name).rejects.toThrow();
  });
});
