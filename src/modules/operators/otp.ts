/**
 * Operator one-time codes (email verification, password reset): 6 digits, stored as a
 * SHA-256 (short-lived and attempt-limited, so a slow hash buys nothing), 10 minutes,
 * 5 wrong attempts, one new code per 60 seconds. Mailed through the system mailer.
 */
import type { AppContext } from '../../context.js';
import { Errors, tooManyRequests } from '../../lib/errors.js';
import { safeEqual, sha256Hex, sixDigitCode } from '../../lib/crypto.js';
import { OperatorErrors } from './errors.js';
import { bumpOtpAttempts, deleteOtp, findOtp, upsertOtp } from './queries.js';
import type { OtpPurpose } from './tables.js';

export const OTP_TTL_MS = 10 * 60_000;
export const OTP_MAX_ATTEMPTS = 5;
export const OTP_COOLDOWN_MS = 60_000;

const hashCode = (operatorId: string, purpose: OtpPurpose, code: string) => sha256Hex(`${operatorId}:${purpose}:${code}`);

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
  const existing = await findOtp(ctx.db.admin, operator.id, purpose);
  const waitMs = existing ? new Date(existing.sent_at).getTime() + OTP_COOLDOWN_MS - now.getTime() : 0;
  if (waitMs > 0) {
    if (quiet) return;
    const seconds = Math.ceil(waitMs / 1000);
    throw tooManyRequests(seconds, `Please wait ${seconds} seconds before requesting a new OTP.`);
  }
  const code = sixDigitCode();
  await upsertOtp(ctx.db.admin, { operatorId: operator.id, purpose, codeHash: hashCode(operator.id, purpose, code), expiresAt: new Date(now.getTime() + OTP_TTL_MS), now });
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

/** Checks a code; on success the code is consumed. `operatorId` undefined = unknown email. */
export async function consumeOtp(ctx: AppContext, operatorId: string | undefined, purpose: OtpPurpose, code: string): Promise<void> {
  const row = operatorId ? await findOtp(ctx.db.admin, operatorId, purpose) : undefined;
  if (!operatorId || !row || new Date(row.expires_at).getTime() <= ctx.clock.now().getTime()) {
    throw OperatorErrors.otp_missing();
  }
  if (row.attempts >= OTP_MAX_ATTEMPTS) throw OperatorErrors.otp_locked();
  if (!safeEqual(row.code_hash, hashCode(operatorId, purpose, code))) {
    const attempts = await bumpOtpAttempts(ctx.db.admin, operatorId, purpose);
    const left = OTP_MAX_ATTEMPTS - attempts;
    if (left <= 0) throw OperatorErrors.otp_locked();
    throw OperatorErrors.otp_incorrect(`Incorrect OTP. ${left} attempt(s) remaining.`);
  }
  await deleteOtp(ctx.db.admin, operatorId, purpose);
}
