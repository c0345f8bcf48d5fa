/**
 * End users' email verification and password reset by one-time code (the policy and the code
 * itself: src/lib/identity/otp.ts), mailed through the project's mail path. None of the
 * endpoints reveals whether an email is registered: every failure is the same 400.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { tooManyRequests } from '../../lib/errors.js';
import { checkOtp, newOtp, otpCooldown as cooldown } from '../../lib/identity/otp.js';
import type { ProjectRecord } from '../projects/cache.js';
import { AuthErrors } from './errors.js';
import { sendAuthMail } from '../mail/auth-mails.js';
import { countOtpAttempt, deleteOtp, findOtp, findUserByEmail, upsertOtp, type NewOtp, type UserRow } from './queries.js';
import type { UserOtpPurpose } from './tables.js';

/** The localized mail of each purpose (src/modules/mail/auth-mails.ts). */
const MAIL_KIND = { verify_email: 'verification', reset_password: 'reset' } as const;

const scope = (project: ProjectRecord) => ({ projectId: project.id, keyKind: 'publishable' as const, account: true });

/**
 * Issues a new code for the user (replacing any older one) in the caller's scope or
 * transaction, and returns it for mailOtp. (Sign-up stores its first code in the statement
 * that creates the account, from newUserOtp: an account never exists without its code.)
 */
export async function issueOtp(ctx: AppContext, db: Tx, project: ProjectRecord, user: UserRow, purpose: UserOtpPurpose): Promise<string> {
  const { code, row } = newUserOtp(ctx, project.id, user.id, purpose);
  await upsertOtp(db, row);
  return code;
}

/** A new code for the user and the row that stores it, before anything is stored. */
export function newUserOtp(ctx: AppContext, projectId: string, userId: string, purpose: UserOtpPurpose): { code: string; row: NewOtp } {
  const now = ctx.clock.now();
  const { code, codeHash, expiresAt } = newOtp(ctx.config.encryptionKey, 'app-user', userId, purpose, now);
  return { code, row: { userId, projectId, purpose, codeHash, expiresAt, now } };
}

/**
 * Mails an issued code through the project's mail path (queued in `tx` when given: both commit
 * or neither), in the user's locale, else the request's Accept-Language, else the project's.
 */
export async function mailOtp(
  ctx: AppContext, project: ProjectRecord, user: UserRow, purpose: UserOtpPurpose, code: string, tx?: Tx, acceptLanguage?: string | null,
): Promise<void> {
  if (!user.email) return; // an anonymous user has no mailbox (and never gets here: codes are asked for by email)
  await sendAuthMail(ctx, project, {
    kind: MAIL_KIND[purpose],
    to: user.email,
    vars: { code, expiresInMinutes: '10' },
    hints: { userData: user.data, acceptLanguage },
  }, tx);
}

/** Issues a new code for the user (replacing any older one) and mails it. */
async function sendOtp(ctx: AppContext, project: ProjectRecord, user: UserRow, purpose: UserOtpPurpose, acceptLanguage?: string | null): Promise<void> {
  const code = await ctx.db.read(scope(project), (db) => issueOtp(ctx, db, project, user, purpose));
  await mailOtp(ctx, project, user, purpose, code, undefined, acceptLanguage);
}

/** One code per email and purpose per minute, whether or not the email is registered (so the 429 reveals nothing). */
async function otpCooldown(ctx: AppContext, project: ProjectRecord, purpose: UserOtpPurpose, email: string): Promise<void> {
  const wait = await cooldown(ctx.limiter, ctx.config.rateLimitScale, `app-user:${purpose}:${project.id}:${email}`);
  if (wait > 0) throw tooManyRequests(wait, `Please wait ${wait} seconds before requesting another code.`);
}

/** Sends a code when the email belongs to a user that needs one; silent otherwise. */
export async function requestCode(ctx: AppContext, project: ProjectRecord, email: string, purpose: UserOtpPurpose, acceptLanguage?: string | null): Promise<void> {
  await otpCooldown(ctx, project, purpose, email);
  const user = await ctx.db.read(scope(project), (db) => findUserByEmail(db, email));
  if (!user || (purpose === 'verify_email' && user.email_verified)) return;
  await sendOtp(ctx, project, user, purpose, acceptLanguage);
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
    const check = checkOtp(ctx.config.encryptionKey, 'app-user', user.id, purpose, code, otp, ctx.clock.now());
    if (check === 'wrong') await countOtpAttempt(tx, user.id, purpose);
    if (check !== 'valid') return false;
    await deleteOtp(tx, user.id, purpose);
    await onValid(tx, user);
    return true;
  });
  if (!ok) throw AuthErrors.invalid_otp();
}
