/**
 * Recovery codes for operators and end users: ten per account, shown once, each 50 random
 * bits (10 Crockford base32 characters, printed `xxxxx-xxxxx`). At rest an HMAC keyed by
 * ENCRYPTION_KEY and bound to the account: a deterministic digest lets one conditional UPDATE
 * find and spend a code (no read-then-write race), and a copy of the table alone cannot be
 * searched. Case, spaces and dashes do not matter when a code is typed back.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { OtpAudience } from './otp.js';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function randomCode(): string {
  const bytes = randomBytes(10);
  let out = '';
  for (const b of bytes) out += ALPHABET[b & 31];
  return `${out.slice(0, 5)}-${out.slice(5)}`.toLowerCase();
}

/** The typed code as stored: upper-case, no separators; null when it cannot be one. */
export function normaliseRecoveryCode(raw: string): string | null {
  const code = raw.replace(/[\s-]/g, '').toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1');
  return /^[0-9A-HJKMNP-TV-Z]{10}$/.test(code) ? code : null;
}

export function recoveryCodeHash(key: Buffer, audience: OtpAudience, accountId: string, normalised: string): string {
  return createHmac('sha256', key).update(`${audience}-recovery:${accountId}:${normalised}`).digest('hex');
}

/** A new set: the codes to show once and their hashes to store. */
export function newRecoveryCodes(key: Buffer, audience: OtpAudience, accountId: string): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, randomCode);
  const hashes = codes.map((c) => recoveryCodeHash(key, audience, accountId, normaliseRecoveryCode(c)!));
  return { codes, hashes };
}
