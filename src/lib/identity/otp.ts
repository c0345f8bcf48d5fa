/**
 * One-time codes for operators (dashboard accounts) and end users (a project's app users): one
 * policy and one implementation for both. A code is 6 CSPRNG digits, valid 10 minutes, dead
 * after 5 wrong guesses and replaced by a newer one. At rest it is an HMAC keyed by the
 * platform's ENCRYPTION_KEY and bound to its audience, account and purpose: a copy of the
 * table alone cannot be brute-forced (a plain hash of a 6-digit code falls to 10^6 tries).
 * Storage (one row per account and purpose) and the error texts stay with each caller.
 */
import { createHmac } from 'node:crypto';
import { safeEqual, sixDigitCode } from '../crypto.js';
import type { RateLimiter } from '../rate-limiter.js';

export const OTP_TTL_SECONDS = 600;
export const OTP_MAX_ATTEMPTS = 5;
/** One code per account (or email) and purpose per minute. */
export const OTP_COOLDOWN_SECONDS = 60;

/** Whose code: the label keeps an operator's and an app user's codes apart under one key. */
export type OtpAudience = 'operator' | 'app-user';

export interface IssuedOtp {
  code: string;
  codeHash: string;
  expiresAt: Date;
}

export interface StoredOtp {
  code_hash: string;
  attempts: number;
  expires_at: Date | string;
}

/** `missing` covers an expired code: both mean "ask for a new one". */
export type OtpCheck = 'valid' | 'missing' | 'locked' | 'wrong';

export function otpHash(key: Buffer, audience: OtpAudience, accountId: string, purpose: string, code: string): string {
  return createHmac('sha256', key).update(`${audience}-otp:${accountId}:${purpose}:${code}`).digest('hex');
}

export function newOtp(key: Buffer, audience: OtpAudience, accountId: string, purpose: string, now: Date): IssuedOtp {
  const code = sixDigitCode();
  return { code, codeHash: otpHash(key, audience, accountId, purpose, code), expiresAt: new Date(now.getTime() + OTP_TTL_SECONDS * 1000) };
}

/** Checks a presented code against the stored row (constant-time). A `wrong` answer must count an attempt. */
export function checkOtp(
  key: Buffer, audience: OtpAudience, accountId: string, purpose: string, code: string, row: StoredOtp | undefined, now: Date,
): OtpCheck {
  if (!row || new Date(row.expires_at).getTime() <= now.getTime()) return 'missing';
  if (row.attempts >= OTP_MAX_ATTEMPTS) return 'locked';
  return safeEqual(row.code_hash, otpHash(key, audience, accountId, purpose, code)) ? 'valid' : 'wrong';
}

/**
 * The resend cooldown, counted by the shared rate limiter under `key` (name the email, not
 * the account, where the answer must not reveal whether an account exists). Returns the
 * seconds to wait, or 0. A fixed rule, not scaled by RATE_LIMIT_SCALE (only 0 turns it off).
 */
export async function otpCooldown(limiter: RateLimiter, rateLimitScale: number, key: string): Promise<number> {
  if (rateLimitScale === 0) return 0;
  const r = await limiter.hit(`otp:cooldown:${key}`, 1, OTP_COOLDOWN_SECONDS);
  return r.allowed ? 0 : Math.max(1, Math.ceil(r.retryAfterSeconds));
}
