/**
 * The archive reader on its own (archive.ts): lines split anywhere by the network and by the
 * gunzip (a character cut in two included) come out whole; an upload that goes silent is
 * stopped (408) without destroying the upload, so the HTTP answer can still be sent.
 */
import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readArchive, type ReadLimits } from '../../../src/modules/backup/archive.js';

const T = '2026-01-01T00:00:00.000Z';
const header = { type: 'header', format: 'plinth-project-archive', version: 1, project: { id: 'a'.repeat(24), name: 'p' }, exportedAt: T };
const doc = (i: number, text: string) => ({ type: 'document', collection: 'c', id: i.toString(16).padStart(24, '0'), ownerId: null, data: { text }, createdAt: T, updatedAt: T, deletedAt: null });
const limits = (over: Partial<ReadLimits> = {}): ReadLimits => ({ maxBytes: 1e9, maxLines: 1e6, maxLineBytes: 1e6, signal: new AbortController().signal, stallMs: 60_000, maxMs: 600_000, ...over });

async function all(input: Readable, l = limits()) {
  const out = [];
  for await (const r of readArchive(input, l)) out.push(r);
  return out;
}

describe('the archive reader', () => {
  it('a gzip stream cut into 1-byte pieces gives back every record whole, multi-byte characters included', async () => {
    const records = [header, ...Array.from({ length: 30 }, (_, i) => doc(i, `é日本🙂${'x'.repeat(i * 97)}`))];
    const gz = gzipSync(records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const bytes = Array.from(gz, (b) => Buffer.from([b]));
    const got = await all(Readable.from(bytes));
    expect(got.map((r) => r.record)).toEqual(records);
    expect(got.map((r) => r.line)).toEqual(records.map((_, i) => i + 1));
    // What holding a line costs is counted in characters (UTF-16 units), not in its UTF-8 bytes.
    expect(got.map((r) => r.chars)).toEqual(records.map((r) => JSON.stringify(r).length));
  });

  it('an upload that sends nothing more: 408 import_stalled, the upload itself left open', async () => {
    const input = new PassThrough();
    input.write(gzipSync(`${JSON.stringify(header)}\n`));
    const t0 = Date.now();
    const err = await all(input, limits({ stallMs: 200 })).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 408, code: 'import_stalled' });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(input.destroyed).toBe(false);
  });

  it('an upload that trickles (a byte now and then, never silent for long): 408 import_timeout at the deadline', async () => {
    const input = new PassThrough();
    const gz = gzipSync(`${JSON.stringify(header)}\n${JSON.stringify(doc(1, 'x'.repeat(10_000)))}\n`);
    input.write(gz.subarray(0, 100));
    let at = 100;
    const trickle = setInterval(() => at < gz.length && input.write(gz.subarray(at, ++at)), 20);
    const t0 = Date.now();
    const err = await all(input, limits({ stallMs: 200, maxMs: 500 })).catch((e: unknown) => e);
    clearInterval(trickle);
    expect(err).toMatchObject({ status: 408, code: 'import_timeout' });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('an upload whose client is gone: 400 import_aborted at once', async () => {
    const input = new PassThrough();
    input.write(gzipSync(`${JSON.stringify(header)}\n`));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const err = await all(input, limits({ signal: ac.signal })).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'import_aborted' });
  });
});
