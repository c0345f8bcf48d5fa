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

/**
 * An ObjectId-shaped id made like the database's new_object_id(): the time, then 8 CSPRNG bytes
 * (no process part, no counter, so ids do not tell one another). For rows whose id the code
 * needs before the insert (a new account's session and code go in the same statement).
 */
export function randomObjectId(now = Date.now()): string {
  return Math.floor(now / 1000).toString(16).padStart(8, '0') + randomBytes(8).toString('hex');
}

/** 128 bits from the CSPRNG as 32 hex characters: nothing about time, node or order. */
export function randomId(): string {
  return randomBytes(16).toString('hex');
}
