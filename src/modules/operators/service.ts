/**
 * Operator accounts: register, login, password change and reset, email verification.
 * Knows no HTTP; routes turn the returned sessions into cookies.
 */
import type { AppContext } from '../../context.js';
import { normalizeEmail } from '../../lib/email.js';
import { OperatorErrors } from './errors.js';
import { consumeOtp, issueOtp } from './otp.js';
import { hashPassword, verifyPassword } from '../../lib/passwords.js';
import { findOperatorByEmail, findOperatorById, insertOperator, revokeAllSessions, updateOperator, type OperatorRow } from './queries.js';
import { announceSessionsEnded, issueSession, type IssuedSession } from './sessions.js';
import { amrEntry, firstFactor, type Assurance } from '../../lib/identity/assurance.js';
import type { OperatorIdentity } from './identity.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';
import { openOperatorChallenge } from './mfa.js';
import { IdentityErrors } from '../../lib/identity/errors.js';

export interface PublicOperator {
  _id: string;
  email: string;
  name: string | null;
  plan: 'free' | 'pro';
  isVerified: boolean;
  isAdmin: boolean;
  createdAt: string;
}

/** Email verification is only asked for when a real mail provider can deliver the code. */
export const verificationRequired = (ctx: AppContext) => !!ctx.config.mail.resendApiKey;

/**
 * ADMIN_EMAIL makes an account admin only once its owner has proven the mailbox whenever
 * verification is on: registering the address first, unverified, gives nothing (the real
 * owner takes the account over by password reset, which verifies it and ends every session).
 */
export const isAdmin = (ctx: AppContext, row: { email: string; is_verified: boolean }) =>
  isAdminEmail(ctx, row.email) && (row.is_verified || !verificationRequired(ctx));

/** Whether this is the ADMIN_EMAIL account, verified or not. */
export const isAdminEmail = (ctx: AppContext, email: string) => !!ctx.config.adminEmail && email === ctx.config.adminEmail;

export function toPublic(ctx: AppContext, row: Omit<OperatorRow, 'password_hash'>): PublicOperator {
  return {
    _id: row.id,
    email: row.email,
    name: row.name,
    plan: row.plan,
    isVerified: row.is_verified,
    isAdmin: isAdmin(ctx, row),
    createdAt: row.created_at.toISOString(),
  };
}

export async function register(ctx: AppContext, input: { email: string; password: string; name?: string }): Promise<PublicOperator> {
  const email = normalizeEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  const row = await insertOperator(ctx.db.admin, {
    email,
    passwordHash,
    name: input.name?.trim() || null,
    verified: !verificationRequired(ctx),
    now: ctx.clock.now(),
  });
  if (!row) throw OperatorErrors.email_exists();
  return toPublic(ctx, row);
}

export interface LoggedIn {
  user: PublicOperator;
  session: IssuedSession;
}

export type LoginOutcome = LoggedIn | { challenge: NonNullable<Awaited<ReturnType<typeof openOperatorChallenge>>> };

/** The password step; an operator with a second factor gets a challenge and no session (mfa.ts). */
export async function login(ctx: AppContext, input: { email: string; password: string }): Promise<LoginOutcome> {
  const row = await findOperatorByEmail(ctx.db.admin, normalizeEmail(input.email));
  // One full argon2 verification either way, so unknown emails cost the same time.
  if (!(await verifyPassword(row?.password_hash, input.password)) || !row) throw IdentityErrors.invalid_credentials();
  const challenge = await openOperatorChallenge(ctx, row.id, firstFactor('pwd', ctx.clock.now()).amr);
  if (challenge) return { challenge };
  return { user: toPublic(ctx, row), session: await issueSession(ctx, row.id) };
}

export async function loadOperator(ctx: AppContext, id: string): Promise<PublicOperator> {
  const row = await findOperatorById(ctx.db.admin, id);
  if (!row) throw OperatorErrors.operator_not_found();
  return toPublic(ctx, row);
}

/**
 * Stores a new password hash and ends every session in one transaction: a password change
 * must never leave the old sessions alive (refresh sessions revoked, older access tokens
 * refused by modules/operators/auth.ts).
 */
async function replacePassword(ctx: AppContext, operatorId: string, passwordHash: string, verified?: true): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.admin.transaction().execute(async (tx) => {
    await updateOperator(tx, operatorId, { password_hash: passwordHash, tokens_valid_after: now, ...(verified ? { is_verified: true } : {}) }, now);
    await revokeAllSessions(tx, operatorId, now);
  });
  await announceSessionsEnded(ctx, operatorId, null);
}

/**
 * Changes the password, ends every session, and opens a fresh one for the caller. An operator
 * with a second factor must be in an aal2 session (403 `mfa_required`, as end users): a stolen
 * password-only session must not take the account over. The new session keeps the caller's
 * assurance (its methods, then the password just typed), so a change does not drop an aal2
 * operator to aal1.
 */
export async function changePassword(ctx: AppContext, operator: OperatorIdentity, current: string, next: string): Promise<LoggedIn> {
  const row = await findOperatorById(ctx.db.admin, operator.id);
  if (!row) throw OperatorErrors.operator_not_found();
  if (operator.hasSecondFactor && operator.aal !== 'aal2') throw MfaErrors.mfa_required();
  if (!(await verifyPassword(row.password_hash, current))) throw OperatorErrors.incorrect_password();
  await replacePassword(ctx, operator.id, await hashPassword(next));
  const now = ctx.clock.now();
  const assurance: Assurance = operator.aal === 'aal2'
    ? { aal: 'aal2', amr: [...operator.amr.filter((e) => e.method !== 'pwd'), amrEntry('pwd', now)] }
    : firstFactor('pwd', now);
  return { user: toPublic(ctx, row), session: await issueSession(ctx, operator.id, undefined, assurance) };
}

/** Sends a verification code. Unknown or already verified accounts get no mail and no hint. */
export async function sendVerificationOtp(ctx: AppContext, email: string): Promise<void> {
  const row = await findOperatorByEmail(ctx.db.admin, normalizeEmail(email));
  if (!row || row.is_verified) return;
  await issueOtp(ctx, row, 'verify_email');
}

/**
 * Verifies the email with the mailed code and signs in, the code being the first factor. An
 * operator with a second factor gets the same challenge as a password sign-in and no session:
 * a mailbox alone must not get past the second factor.
 */
export async function verifyEmail(ctx: AppContext, email: string, otp: string): Promise<LoginOutcome> {
  const row = await findOperatorByEmail(ctx.db.admin, normalizeEmail(email));
  await consumeOtp(ctx, row?.id, 'verify_email', otp);
  const now = ctx.clock.now();
  const updated = await updateOperator(ctx.db.admin, row!.id, { is_verified: true }, now);
  const first = firstFactor('otp', now);
  const challenge = await openOperatorChallenge(ctx, row!.id, first.amr);
  if (challenge) return { challenge };
  return { user: toPublic(ctx, updated!), session: await issueSession(ctx, row!.id, undefined, first) };
}

export async function forgotPassword(ctx: AppContext, email: string): Promise<void> {
  const row = await findOperatorByEmail(ctx.db.admin, normalizeEmail(email));
  if (row) await issueOtp(ctx, row, 'reset_password', true);
}

/**
 * Resets the password with a mailed code; every session ends. Owning the mailbox also verifies
 * it. The code is checked first, on its own: a wrong attempt must be counted even though the
 * request fails.
 */
export async function resetPassword(ctx: AppContext, email: string, otp: string, newPassword: string): Promise<void> {
  const row = await findOperatorByEmail(ctx.db.admin, normalizeEmail(email));
  await consumeOtp(ctx, row?.id, 'reset_password', otp);
  await replacePassword(ctx, row!.id, await hashPassword(newPassword), true);
}
