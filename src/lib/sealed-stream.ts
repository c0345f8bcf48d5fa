/**
 * Authenticated streaming encryption for objects at rest (stored backups, docs/backup.md
 * "Encryption at rest"): AES-256-GCM over fixed-size chunks, in the manner of the STREAM
 * construction (Hoang, Reyhanitabar, Rogaway, Vizár), from node:crypto only. Memory is one chunk
 * whatever the object's size.
 *
 * Layout of a sealed object:
 *
 *   header  (45 bytes): magic "PLNTHSB1" (8) | version 0x01 (1) | chunk size, uint32 BE (4) | salt (32)
 *   frames, each:       length word, uint32 BE (4) | ciphertext (length bytes) | GCM tag (16)
 *
 * - The object's key is HKDF-SHA256(master key, salt, info = "plinth-sealed-stream/v1 " + context),
 *   32 bytes: a random salt per object, so no two objects share a key, and the context (a
 *   project id) binds an object to its owner (another project's key does not open it).
 * - Frame i (from 0) is sealed with IV = 4 zero bytes | i as uint64 BE: an IV never repeats under
 *   one key. The length word is the plaintext length, with its top bit set on the LAST frame.
 * - Each frame's additional data is the header followed by its length word: the frame is bound
 *   to this object's parameters and to its own length and finality.
 * - Every frame but the last holds exactly `chunk size` bytes; the last holds 0 to `chunk size`.
 *
 * So a reader detects any change: a modified, reordered, dropped or duplicated frame fails its
 * tag (its index is in the IV); a cut object ends without a final frame; bytes after the final
 * frame, or a second final frame, are refused. Plaintext is released frame by frame, only once
 * that frame's tag checked: a consumer of a cut or tampered object may have received the
 * authentic frames before the fault, then sees the stream fail (an import rolls back).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

const MAGIC = Buffer.from('PLNTHSB1', 'ascii');
const VERSION = 1;
export const SEALED_HEADER_BYTES = MAGIC.length + 1 + 4 + 32;
const TAG_BYTES = 16;
const FINAL = 0x8000_0000;
/** 64 KiB frames: ~0.03 % of overhead, and a reader holds at most one. */
export const DEFAULT_CHUNK_BYTES = 64 * 1024;
const MAX_CHUNK_BYTES = 16 * 1024 * 1024;

export class SealedStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealedStreamError';
  }
}

function objectKey(master: Buffer, salt: Buffer, context: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, salt, `plinth-sealed-stream/v1 ${context}`, 32));
}

function ivOf(index: number): Buffer {
  const iv = Buffer.alloc(12);
  iv.writeBigUInt64BE(BigInt(index), 4);
  return iv;
}

function lengthWord(length: number, final: boolean): Buffer {
  const w = Buffer.alloc(4);
  w.writeUInt32BE((final ? FINAL : 0) + length);
  return w;
}

/** A Transform that seals what goes through it with `master` (32 bytes) for `context`. */
export function sealStream(master: Buffer, context: string, chunkBytes = DEFAULT_CHUNK_BYTES): Transform {
  if (master.length !== 32) throw new Error('sealStream: the key must be 32 bytes');
  const salt = randomBytes(32);
  const header = Buffer.alloc(SEALED_HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt8(VERSION, MAGIC.length);
  header.writeUInt32BE(chunkBytes, MAGIC.length + 1);
  salt.copy(header, MAGIC.length + 5);
  const key = objectKey(master, salt, context);
  let index = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;

  const frame = (plain: Buffer, final: boolean): Buffer => {
    const word = lengthWord(plain.length, final);
    const cipher = createCipheriv('aes-256-gcm', key, ivOf(index++));
    cipher.setAAD(Buffer.concat([header, word]));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([word, body, cipher.getAuthTag()]);
  };

  let headerSent = false;
  return new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      if (!headerSent) {
        this.push(header);
        headerSent = true;
      }
      pending.push(chunk);
      pendingBytes += chunk.length;
      // Seal whole chunks, keeping at least one byte back: the last frame is sealed at flush.
      if (pendingBytes > chunkBytes) {
        let all = Buffer.concat(pending);
        while (all.length > chunkBytes) {
          this.push(frame(all.subarray(0, chunkBytes), false));
          all = all.subarray(chunkBytes);
        }
        pending = [Buffer.from(all)];
        pendingBytes = all.length;
      }
      cb();
    },
    flush(cb: TransformCallback) {
      if (!headerSent) this.push(header);
      this.push(frame(Buffer.concat(pending), true));
      pending = [];
      cb();
    },
  });
}

/** A Transform that opens a sealed object for `context`; it fails on anything not sealed by `sealStream` with this key and context. */
export function openStream(master: Buffer, context: string): Transform {
  let buf: Buffer = Buffer.alloc(0);
  let header: Buffer | null = null;
  let key: Buffer | null = null;
  let chunkBytes = 0;
  let index = 0;
  let done = false;

  const step = (t: Transform): void => {
    if (!header) {
      if (buf.length < SEALED_HEADER_BYTES) return;
      header = Buffer.from(buf.subarray(0, SEALED_HEADER_BYTES));
      if (!header.subarray(0, MAGIC.length).equals(MAGIC)) throw new SealedStreamError('not a sealed object (bad magic)');
      if (header.readUInt8(MAGIC.length) !== VERSION) throw new SealedStreamError(`unknown sealed object version ${header.readUInt8(MAGIC.length)}`);
      chunkBytes = header.readUInt32BE(MAGIC.length + 1);
      if (chunkBytes < 1 || chunkBytes > MAX_CHUNK_BYTES) throw new SealedStreamError('bad chunk size');
      key = objectKey(master, header.subarray(MAGIC.length + 5), context);
      buf = buf.subarray(SEALED_HEADER_BYTES);
    }
    for (;;) {
      if (buf.length === 0) return;
      if (done) throw new SealedStreamError('bytes after the final frame');
      if (buf.length < 4) return;
      const word = buf.readUInt32BE(0);
      const final = (word & FINAL) !== 0;
      const length = word & ~FINAL;
      if (length > chunkBytes || (!final && length !== chunkBytes)) throw new SealedStreamError('bad frame length');
      const total = 4 + length + TAG_BYTES;
      if (buf.length < total) return;
      const decipher = createDecipheriv('aes-256-gcm', key!, ivOf(index++));
      decipher.setAAD(Buffer.concat([header, buf.subarray(0, 4)]));
      decipher.setAuthTag(buf.subarray(4 + length, total));
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(buf.subarray(4, 4 + length)), decipher.final()]);
      } catch {
        throw new SealedStreamError(`frame ${index - 1} does not authenticate (wrong key, or the object was changed)`);
      }
      buf = buf.subarray(total);
      if (plain.length) t.push(plain);
      if (final) done = true;
    }
  };

  return new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      try {
        step(this);
        // Keep only what a frame still needs (no growing copy of consumed input).
        buf = Buffer.from(buf);
        cb();
      } catch (err) {
        cb(err as Error);
      }
    },
    flush(cb: TransformCallback) {
      if (!done || buf.length) return cb(new SealedStreamError(header ? 'the sealed object is cut (no final frame)' : 'the sealed object is cut (no header)'));
      cb();
    },
  });
}
