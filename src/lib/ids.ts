/** ObjectId-format identifiers (24 hex characters): 4-byte time, 5 random bytes, 3-byte counter. */
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
