/**
 * Email verification and password reset by 6-digit one-time code: CSPRNG digits, stored as an
 * HMAC, valid 10 minutes, dead after 5 wrong guesses, replaced by a newer code, mailed through
 * the project's mail path. None of the endpoints reveals whether an email is registered.
 */
import { createHmac } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { safeEqual, sixDigitCode } from '../../lib/crypto.js';
import { tooManyRequests } from '../../lib/errors.js';
import type { ProjectRecord } from '../projects/cache.js';
import { AuthErrors } from './errors.js';
import { countOtpAttempt, deleteOtp, findOtp, findUserByEmail, upsertOtp, type UserRow } from './queries.js';
import type { UserOtpPurpose } from './tables.js';

export const OTP_TTL_SECONDS = 600;
export const OTP_MAX_ATTEMPTS = 5;
export const OTP_COOLDOWN_SECONDS = 60;

const MAIL = {
  verify_email: { tag: 'auth.verify-email', subject: (p: string) => `Verify your email for ${p}`, what: 'verify your email' },
  reset_password: { tag: 'auth.password-reset', subject: (p: string) => `Reset your ${p} password`, what: 'reset your password' },
} as const;

function codeHash(ctx: AppContext, userId: string, purpose: UserOtpPurpose, code: string): string {
  return createHmac('sha256', ctx.config.encryptionKey).update(`app-user-otp:${userId}:${purpose}:${code}`).digest('hex');
}

const scope = (project: ProjectRecord) => ({ projectId: project.id, keyKind: 'publishable' as const });

/** Issues a new code for the user (replacing any older one) and mails it. */
export async function sendOtp(ctx: AppContext, project: ProjectRecord, user: UserRow, purpose: UserOtpPurpose): Promise<void> {
  const code = sixDigitCode();
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + OTP_TTL_SECONDS * 1000);
  await ctx.db.read(scope(project), (tx) =>
    upsertOtp(tx, { userId: user.id, projectId: project.id, purpose, codeHash: codeHash(ctx, user.id, purpose, code), expiresAt, now }),
  );
  const m = MAIL[purpose];
  const text = `Your code to ${m.what} is ${code}. It expires in 10 minutes. If you did not ask for it, ignore this email.`;
  await ctx.mailer.sendSystemMail({
    projectId: project.id,
    to: user.email,
    subject: m.subject(project.name),
    text,
    html: `<p>Your code to ${m.what} is <strong>${code}</strong>.</p><p>It expires in 10 minutes. If you did not ask for it, ignore this email.</p>`,
    tag: m.tag,
  });
}

/**
 * One code per email and purpose per minute, whether or not the email is registered (so the
 * 429 reveals nothing). A fixed rule, not scaled by RATE_LIMIT_SCALE (only 0 turns it off).
 */
async function otpCooldown(ctx: AppContext, project: ProjectRecord, purpose: UserOtpPurpose, email: string): Promise<void> {
  if (ctx.config.rateLimitScale === 0) return;
  const r = await ctx.limiter.hit(`ua:otp:cooldown:${purpose}:${project.id}:${email}`, 1, OTP_COOLDOWN_SECONDS);
  if (!r.allowed) {
    const wait = Math.max(1, Math.ceil(r.retryAfterSeconds));
    throw tooManyRequests(wait, `Please wait ${wait} seconds before requesting another code.`);
  }
}

/** Sends a code when the email belongs to a user that needs one; silent otherwise. */
export async function requestCode(ctx: AppContext, project: ProjectRecord, email: string, purpose: UserOtpPurpose): Promise<void> {
  await otpCooldown(ctx, project, purpose, email);
  const user = await ctx.db.read(scope(project), (db) => findUserByEmail(db, email));
  if (!user || (purpose === 'verify_email' && user.email_verified)) return;
  await sendOtp(ctx, project, user, purpose);
}

/**
 * Checks and consumes a code inside one transaction, then runs `onValid` in it. A wrong code
 * counts an attempt (committed); every failure is the same 400, known email or not.
 */
export async function consumeCode(
  ctx: AppContext,
  project: ProjectRecord,
  email: string,
  purpose: UserOtpPurpose,
  code: string,
  onValid: (tx: Tx, user: UserRow) => Promise<void>,
): Promise<void> {
  const ok = await ctx.db.tenant(scope(project), async (tx) => {
    const user = await findUserByEmail(tx, email);
    if (!user) return false;
    const otp = await findOtp(tx, user.id, purpose);
    if (!otp || otp.attempts >= OTP_MAX_ATTEMPTS || otp.expires_at <= ctx.clock.now()) return false;
    if (!safeEqual(otp.code_hash, codeHash(ctx, user.id, purpose, code))) {
      await countOtpAttempt(tx, user.id, purpose);
      return false;
    }
    await deleteOtp(tx, user.id, purpose);
    await onValid(tx, user);
    return true;
  });
  if (!ok) throw AuthErrors.invalid_otp();
}
