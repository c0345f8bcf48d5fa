/**
 * Identifiers. ObjectId format (24 hex characters: 4-byte time, 5 per-process random bytes,
 * 3-byte counter) for rows whose ids are not secrets; `randomId` for ids that must not be
 * guessable from one another (refresh sessions).
 */
import { randomBytes } from 'node:crypto';

const processRandom = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export function objectId(now = Date.now()): string {
  counter = (counter + 1) % 0xffffff;
  const time = Math.floor(now / 1000).toString(16).padStart(8, '0');
  return time + processRandom + counter.toString(16).padStart(6, '0');
}

const OBJECT_ID = /^[0-9a-f]{24}$/;

export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && OBJECT_ID.test(value);
}

/** 128 bits from the CSPRNG as 32 hex characters: nothing about time, node or order. */
export function randomId(): string {
  return randomBytes(16).toString('hex');
}
