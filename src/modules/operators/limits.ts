/**
 * Rate limits of the operator account routes (DESIGN): 10 login/register attempts per 15
 * minutes per IP; per email, 5 codes sent and 5 codes checked per 10 minutes.
 */
import type { AppContext } from '../../context.js';
import { normalizeEmail } from '../../lib/email.js';

const AUTH_WINDOW = 15 * 60;
const OTP_WINDOW = 10 * 60;
const AUTH_LIMIT_MESSAGE = 'Too many attempts. Please try again in 15 minutes.';

export const limitAuthAttempts = (ctx: AppContext, ip: string) =>
  ctx.limits.enforce(`operator:auth:${ip}`, 10, AUTH_WINDOW, AUTH_LIMIT_MESSAGE);

/** Shared by send-otp and forgot-password: one budget of mails per address. */
export const limitOtpSends = (ctx: AppContext, email: string) =>
  ctx.limits.enforce(`operator:otp-send:${normalizeEmail(email)}`, 5, OTP_WINDOW);

/** Shared by verify-otp and reset-password: one budget of guesses per address. */
export const limitOtpChecks = (ctx: AppContext, email: string) =>
  ctx.limits.enforce(`operator:otp-verify:${normalizeEmail(email)}`, 5, OTP_WINDOW);
