/**
 * Rate limits of the operator account routes (docs/security.md, "Rate limits"): 10 login/register attempts per 15
 * minutes per IP; 10 failed logins per 15 minutes per email (from any address); per email,
 * 5 codes sent and 5 codes checked per 10 minutes.
 */
import type { AppContext } from '../../context.js';
import { normalizeEmail } from '../../lib/email.js';
import { AppError } from '../../lib/errors.js';

const AUTH_WINDOW = 15 * 60;
const OTP_WINDOW = 10 * 60;
const AUTH_LIMIT_MESSAGE = 'Too many attempts. Please try again in 15 minutes.';

export const limitAuthAttempts = (ctx: AppContext, ip: string) =>
  ctx.limits.enforce(`operator:auth:${ip}`, 10, AUTH_WINDOW, AUTH_LIMIT_MESSAGE);

/**
 * A sign-in attempt under the per-account limit: 10 failed logins (wrong email or password) per
 * email per 15 minutes, from any address. Successful sign-ins do not count.
 */
export const withLoginFailureLimit = <T>(ctx: AppContext, email: string, attempt: () => Promise<T>) =>
  ctx.limits.failures(
    [{ key: `operator:login-fail:${normalizeEmail(email)}`, limit: 10, windowSeconds: AUTH_WINDOW, message: AUTH_LIMIT_MESSAGE }],
    (err) => err instanceof AppError && err.status === 401,
    attempt,
  );

/** Shared by send-otp and forgot-password: one budget of mails per address. */
export const limitOtpSends = (ctx: AppContext, email: string) =>
  ctx.limits.enforce(`operator:otp-send:${normalizeEmail(email)}`, 5, OTP_WINDOW);

/** Shared by verify-otp and reset-password: one budget of guesses per address. */
export const limitOtpChecks = (ctx: AppContext, email: string) =>
  ctx.limits.enforce(`operator:otp-verify:${normalizeEmail(email)}`, 5, OTP_WINDOW);
