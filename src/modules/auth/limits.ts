/**
 * Abuse limits of the end-user endpoints (docs/security.md, "Rate limits"), through ctx.limits: memory on
 * one node, Redis across nodes when REDIS_URL is set. All scale with RATE_LIMIT_SCALE.
 */
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';

const MIN = 60;
const TEN_MIN = 600;
const FIFTEEN_MIN = 900;

/** Login attempts per address (any outcome): a flood guard. */
export function loginLimit(ctx: AppContext, projectId: string, ip: string): Promise<void> {
  return ctx.limits.enforce(`ua:login:ip:${projectId}:${ip}`, 30, MIN, 'Too many login attempts from this IP, please try again later.');
}

/** A wrong email/password (401); a correct password on an unverified account is no failure. */
const isBadCredential = (err: unknown) => err instanceof AppError && err.status === 401;

/**
 * Runs a login attempt under the failed-login limits: per account (the email, whatever address
 * the guesses come from) 10 and per address 50 failures per 15 minutes. Successful logins do
 * not count.
 */
export function withLoginFailureLimits<T>(ctx: AppContext, projectId: string, ip: string, email: string, attempt: () => Promise<T>): Promise<T> {
  const message = 'Too many failed login attempts, please try again later.';
  return ctx.limits.failures(
    [
      { key: `ua:login:fail:acct:${projectId}:${email}`, limit: 10, windowSeconds: FIFTEEN_MIN, message },
      { key: `ua:login:fail:ip:${projectId}:${ip}`, limit: 50, windowSeconds: FIFTEEN_MIN, message },
    ],
    isBadCredential,
    attempt,
  );
}

export function signupLimit(ctx: AppContext, projectId: string, ip: string): Promise<void> {
  return ctx.limits.enforce(`ua:signup:ip:${projectId}:${ip}`, 20, MIN, 'Too many sign-ups from this IP, please try again later.');
}

/** OTP send/verify and password reset: 5 per 10 minutes per email and purpose. */
export function otpLimit(ctx: AppContext, projectId: string, kind: 'verify-send' | 'verify-check' | 'reset-send' | 'reset-check', email: string): Promise<void> {
  return ctx.limits.enforce(`ua:otp:${kind}:${projectId}:${email}`, 5, TEN_MIN, 'Too many attempts for this email, please try again later.');
}

export function refreshLimit(ctx: AppContext, projectId: string, ip: string): Promise<void> {
  return ctx.limits.enforce(`ua:refresh:ip:${projectId}:${ip}`, 30, MIN, 'Too many refresh attempts from this IP');
}

/** Passwordless sign-in mails: 5 per 10 minutes per email (whether or not it has an account) and 20 per address. */
export async function passwordlessSendLimit(ctx: AppContext, projectId: string, ip: string, email: string): Promise<void> {
  await ctx.limits.enforce(`ua:pwless:send:ip:${projectId}:${ip}`, 20, TEN_MIN, 'Too many sign-in requests from this IP, please try again later.');
  await ctx.limits.enforce(`ua:pwless:send:${projectId}:${email}`, 5, TEN_MIN, 'Too many attempts for this email, please try again later.');
}

/** Passwordless sign-in attempts (link or code): 30 per 10 minutes per address. */
export function passwordlessVerifyLimit(ctx: AppContext, projectId: string, ip: string): Promise<void> {
  return ctx.limits.enforce(`ua:pwless:verify:ip:${projectId}:${ip}`, 30, TEN_MIN, 'Too many sign-in attempts from this IP, please try again later.');
}

/**
 * Code guesses per email, whatever the address and however many codes were requested: 5 per
 * 10 minutes (each code also dies after 5 wrong tries).
 */
export function passwordlessCodeLimit(ctx: AppContext, projectId: string, email: string): Promise<void> {
  return ctx.limits.enforce(`ua:pwless:code:${projectId}:${email}`, 5, TEN_MIN, 'Too many attempts for this email, please try again later.');
}

/** Guest sign-ins: 30 per hour per address. */
export function anonymousLimit(ctx: AppContext, projectId: string, ip: string): Promise<void> {
  return ctx.limits.enforce(`ua:anon:ip:${projectId}:${ip}`, 30, 3600, 'Too many guest sign-ins from this IP, please try again later.');
}
