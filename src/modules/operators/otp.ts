/**
 * Operators' email verification and password reset by one-time code (the policy and the code
 * itself: src/lib/identity/otp.ts, shared with end users), mailed through the system mailer.
 * The resend cooldown counts both in the shared limiter and on the stored code's `sent_at`
 * (durable and cluster-wide even while Redis is away).
 */
import type { AppContext } from '../../context.js';
import { Errors, tooManyRequests } from '../../lib/errors.js';
import { checkOtp, newOtp, OTP_COOLDOWN_SECONDS, OTP_MAX_ATTEMPTS, otpCooldown } from '../../lib/identity/otp.js';
import { OperatorErrors } from './errors.js';
import { bumpOtpAttempts, deleteOtp, findOtp, upsertOtp } from './queries.js';
import type { OtpPurpose } from './tables.js';

const MAIL: Record<OtpPurpose, { subject: string; line: string }> = {
  verify_email: { subject: 'Verify your Plinth account', line: 'Your verification code is' },
  reset_password: { subject: 'Reset your Plinth password', line: 'Your password reset code is' },
};

/**
 * Creates and mails a new code. Within the cooldown it throws 429 with Retry-After, or, when
 * `quiet` (forgot-password must not reveal anything), returns without sending.
 */
export async function issueOtp(ctx: AppContext, operator: { id: string; email: string }, purpose: OtpPurpose, quiet = false): Promise<void> {
  const now = ctx.clock.now();
  const wait = await resendWait(ctx, operator.id, purpose, now);
  if (wait > 0) {
    if (quiet) return;
    throw tooManyRequests(wait, `Please wait ${wait} seconds before requesting a new OTP.`);
  }
  const { code, codeHash, expiresAt } = newOtp(ctx.config.encryptionKey, 'operator', operator.id, purpose, now);
  await upsertOtp(ctx.db.admin, { operatorId: operator.id, purpose, codeHash, expiresAt, now });
  const { subject, line } = MAIL[purpose];
  try {
    await ctx.mailer.sendSystemMail({
      projectId: null,
      to: operator.email,
      subject,
      text: `${line} ${code}. It expires in 10 minutes. If you did not ask for it, ignore this email.`,
      html: `<p>${line} <strong>${code}</strong>.</p><p>It expires in 10 minutes. If you did not ask for it, ignore this email.</p>`,
      tag: 'operator.otp',
    });
  } catch (err) {
    ctx.log.error({ err: (err as Error).message, purpose }, 'operator otp mail failed');
    if (!quiet) throw Errors.upstream_failed('Could not send the OTP email. Please try again later.');
  }
}

/** Seconds until another code may be sent: the stored code's age and the shared limiter agree. */
async function resendWait(ctx: AppContext, operatorId: string, purpose: OtpPurpose, now: Date): Promise<number> {
  const existing = await findOtp(ctx.db.admin, operatorId, purpose);
  const storedMs = existing ? new Date(existing.sent_at).getTime() + OTP_COOLDOWN_SECONDS * 1000 - now.getTime() : 0;
  if (storedMs > 0) return Math.ceil(storedMs / 1000);
  return otpCooldown(ctx.limiter, ctx.config.rateLimitScale, `operator:${purpose}:${operatorId}`);
}

/** Checks a code; on success the code is consumed. `operatorId` undefined = unknown email. */
export async function consumeOtp(ctx: AppContext, operatorId: string | undefined, purpose: OtpPurpose, code: string): Promise<void> {
  const row = operatorId ? await findOtp(ctx.db.admin, operatorId, purpose) : undefined;
  const check = operatorId ? checkOtp(ctx.config.encryptionKey, 'operator', operatorId, purpose, code, row, ctx.clock.now()) : 'missing';
  if (!operatorId || check === 'missing') throw OperatorErrors.otp_missing();
  if (check === 'locked') throw OperatorErrors.otp_locked();
  if (check === 'wrong') {
    const attempts = await bumpOtpAttempts(ctx.db.admin, operatorId, purpose);
    const left = OTP_MAX_ATTEMPTS - attempts;
    if (left <= 0) throw OperatorErrors.otp_locked();
    throw OperatorErrors.otp_incorrect(`Incorrect OTP. ${left} attempt(s) remaining.`);
  }
  await deleteOtp(ctx.db.admin, operatorId, purpose);
}
