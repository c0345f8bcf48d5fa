/**
 * Abuse limits of the end-user endpoints (DESIGN "Rate limits"), through ctx.limits: memory on
 * one node, Redis across nodes when REDIS_URL is set. All scale with RATE_LIMIT_SCALE.
 */
import type { AppContext } from '../../context.js';

const MIN = 60;
const TEN_MIN = 600;

export async function loginLimits(ctx: AppContext, projectId: string, ip: string, email: string): Promise<void> {
  await ctx.limits.enforce(`ua:login:ip:${projectId}:${ip}`, 30, MIN, 'Too many login attempts from this IP, please try again later.');
  await ctx.limits.enforce(`ua:login:ipe:${projectId}:${ip}:${email}`, 10, MIN, 'Too many login attempts, please try again later.');
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
