/**
 * Passwordless sign-in by email (docs/auth.md "Passwordless by email"): one request mails a
 * magic link and a 6-digit code; either signs the user in once, within 10 minutes, in the
 * project that issued it, for the email it was sent to. Knows no HTTP.
 *
 * - The link is 256 random bits, stored as SHA-256; the code is an HMAC (ENCRYPTION_KEY) bound
 *   to the project, the email and the purpose `passwordless`, in a table of its own: a sign-in
 *   code is no verification or reset code and the other way round (src/lib/identity/otp.ts).
 * - A new request replaces the previous one; 5 wrong codes kill the code (the link stays).
 * - The link opens the project's site URL (`<siteUrl>/auth/callback`), or `redirectTo` when it
 *   lies under the site URL or a configured redirect URL (src/lib/redirect-target.ts); the
 *   token travels in the fragment (`#type=magiclink&token=…`), which browsers never send to a
 *   server nor put in a Referer. The page posts it to /passwordless/verify: a mail scanner that
 *   fetches the link spends nothing.
 * - A sign-in issued for an account stops working when that account's email changes; one
 *   issued for a new address creates the account at sign-in (when the project allows sign-up).
 * - The answer to a request never depends on whether the email has an account.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { randomToken, sha256Hex } from '../../lib/crypto.js';
import { tooManyRequests } from '../../lib/errors.js';
import { firstFactor } from '../../lib/identity/assurance.js';
import { checkOtp, newOtp, otpCooldown, OTP_TTL_SECONDS } from '../../lib/identity/otp.js';
import { randomPasswordHash } from '../../lib/passwords.js';
import { allowedRedirect } from '../../lib/redirect-target.js';
import { sendAuthMail } from '../mail/auth-mails.js';
import { openChallengeIfEnrolled, type OpenedChallenge } from '../mfa/challenge.js';
import type { ProjectRecord } from '../projects/cache.js';
import { AuthErrors } from './errors.js';
import { countCodeAttempt, deletePasswordless, findForCode, takeByLink, upsertPasswordless, type PasswordlessRow } from './passwordless-queries.js';
import { claimUnverified } from './claim.js';
import { findUserByEmail, findUserById, insertUser, type UserRow } from './queries.js';
import { usersSchemaFor, type UsersSchema } from './schema.js';
import { signUpFields, signUpScope, type NewUserFields } from './sign-up-hook.js';
import { authHook } from '../functions/auth-hooks.js';
import { issueSession, startSession, type ClientMeta, type Tokens } from './sessions.js';
import { enqueueAuthHooks } from '../functions/auth-events.js';
import { redirectTargets, signupAllowed } from './sign-in-settings.js';
import { freeDerivedValues, rethrowTaken } from './unique.js';
import { newUserData } from './users.js';

export const PASSWORDLESS_TTL_SECONDS = OTP_TTL_SECONDS;
const PURPOSE = 'passwordless';
export const MAGIC_LINK_TAG = 'auth.passwordless';

const scope = (project: ProjectRecord) => ({ projectId: project.id, keyKind: 'publishable' as const, account: true });
/** The code's HMAC subject: the project and the email (there may be no account yet). */
const subject = (project: ProjectRecord, email: string) => `${project.id}:${email}`;

export interface StartInput {
  email: string;
  redirectTo?: string;
  /** false: only existing accounts may sign in this way (nothing is created). */
  createUser?: boolean;
  /** Custom fields of the account to create (validated against the users schema). */
  data?: Record<string, unknown>;
  /** The request's Accept-Language: the mail's language when the account has no `locale`. */
  acceptLanguage?: string | null;
}

/** Where the link goes: `redirectTo` when configured for the project, else `<siteUrl>/auth/callback`; null: no link (code only). */
export function linkTarget(project: ProjectRecord, redirectTo: string | undefined): URL | null {
  if (redirectTo !== undefined && redirectTo !== '') {
    const url = allowedRedirect(redirectTo, redirectTargets(project));
    if (!url) throw AuthErrors.redirect_not_allowed();
    return url;
  }
  return project.siteUrl ? new URL(`${project.siteUrl.replace(/\/+$/, '')}/auth/callback`) : null;
}

function magicLink(target: URL, token: string): string {
  const url = new URL(target.href);
  url.hash = new URLSearchParams({ type: 'magiclink', token }).toString();
  return url.href;
}

/**
 * The sign-in mail, in the reader's language (docs/mail.md "Auth mails"): `magic_link` (the link
 * and the same request's code) when the project has a site to open, else `email_code`. Through
 * the project's mail settings and the queue (in `tx`: both commit or neither).
 */
async function mailSignIn(
  ctx: AppContext, project: ProjectRecord, to: { email: string; user: UserRow | null | undefined; acceptLanguage?: string | null }, code: string, link: string | null, tx: Tx,
  ttlSeconds = PASSWORDLESS_TTL_SECONDS, tag = MAGIC_LINK_TAG,
): Promise<void> {
  const expiresInMinutes = String(ttlSeconds / 60);
  await sendAuthMail(ctx, project, {
    kind: link ? 'magic_link' : 'email_code',
    to: to.email,
    vars: link ? { linkUrl: link, code, expiresInMinutes } : { code, expiresInMinutes },
    hints: { userData: to.user?.data, acceptLanguage: to.acceptLanguage },
    tag,
  }, tx);
}

/** An invitation stays valid longer than a sign-in someone just asked for: the reader may open it the next day. */
export const INVITE_TTL_SECONDS = 24 * 60 * 60;
export const INVITE_TAG = 'auth.invite';

/**
 * An administrator's invitation (docs/auth.md "User administration"): a passwordless sign-in
 * for an existing account, mailed as the magic-link mail (or the code mail when the project has
 * no site URL), valid 24 hours and once, replacing any sign-in in flight for that email. Signing
 * in through it proves the mailbox (the email becomes verified, claim.ts). No cooldown: the
 * caller holds the secret key or owns the project. In `tx`, with the caller's writes.
 */
export async function mailInvitation(ctx: AppContext, tx: Tx, project: ProjectRecord, user: UserRow & { email: string }, redirectTo?: string): Promise<void> {
  const target = linkTarget(project, redirectTo);
  const now = ctx.clock.now();
  const token = randomToken(32);
  const otp = newOtp(ctx.config.encryptionKey, 'app-user', subject(project, user.email), PURPOSE, now);
  const expiresAt = new Date(now.getTime() + INVITE_TTL_SECONDS * 1000);
  await upsertPasswordless(tx, {
    projectId: project.id, email: user.email, userId: user.id, linkHash: sha256Hex(token), codeHash: otp.codeHash,
    signupData: {}, expiresAt, now,
  });
  await mailSignIn(ctx, project, { email: user.email, user }, otp.code, target && magicLink(target, token), tx, INVITE_TTL_SECONDS, INVITE_TAG);
}

/** One request per email per minute, whether or not the email has an account (so the 429 tells nothing). */
async function cooldown(ctx: AppContext, project: ProjectRecord, email: string): Promise<void> {
  const wait = await otpCooldown(ctx.limiter, ctx.config.rateLimitScale, `app-user:${PURPOSE}:${project.id}:${email}`);
  if (wait > 0) throw tooManyRequests(wait, `Please wait ${wait} seconds before requesting another code.`);
}

/**
 * Mails a link and a code when the email may sign in: it has an enabled account, or the
 * project allows sign-up and the caller did not refuse creation. Silent otherwise: the caller
 * answers the same in every case. A bad `redirectTo` or bad custom fields are refused for every
 * email alike, before anything is looked up.
 */
export async function startPasswordless(ctx: AppContext, project: ProjectRecord, schema: UsersSchema, input: StartInput): Promise<void> {
  const target = linkTarget(project, input.redirectTo);
  const mayCreate = signupAllowed(project) && input.createUser !== false;
  const signup = mayCreate ? newUserData(schema, input.email, input.data ?? {}) : { data: {}, derived: [] };
  await cooldown(ctx, project, input.email);
  const user = await ctx.db.read(scope(project), (db) => findUserByEmail(db, input.email));
  if (user ? user.disabled_at !== null : !mayCreate) return;
  const now = ctx.clock.now();
  const token = randomToken(32);
  const otp = newOtp(ctx.config.encryptionKey, 'app-user', subject(project, input.email), PURPOSE, now);
  await ctx.db.tenant(scope(project), async (tx) => {
    await upsertPasswordless(tx, {
      projectId: project.id, email: input.email, userId: user?.id ?? null, linkHash: sha256Hex(token), codeHash: otp.codeHash,
      signupData: signup, expiresAt: otp.expiresAt, now,
    });
    await mailSignIn(ctx, project, { email: input.email, user, acceptLanguage: input.acceptLanguage }, otp.code, target && magicLink(target, token), tx);
  });
}

export type PasswordlessOutcome =
  | { user: UserRow; tokens: Tokens; isNewUser: boolean; challenge?: undefined }
  | { user: UserRow; challenge: OpenedChallenge; isNewUser: false; tokens?: undefined };

/** Signs in with a magic link's token: single use, this project's, unexpired. */
export async function verifyMagicLink(ctx: AppContext, project: ProjectRecord, token: string, meta: ClientMeta): Promise<PasswordlessOutcome> {
  const row = await ctx.db.read(scope(project), (db) => takeByLink(db, project.id, sha256Hex(token)));
  if (!row || row.expires_at.getTime() <= ctx.clock.now().getTime()) throw AuthErrors.passwordless_invalid();
  return signIn(ctx, project, row, 'magiclink', meta, await newAccountFields(ctx, project, row, 'magic-link'));
}

/**
 * Signs in with the code mailed to `email`. A wrong code counts a try (committed) and dies at
 * the fifth; every failure is the same 400, for known and unknown emails alike.
 */
export async function verifyEmailCode(ctx: AppContext, project: ProjectRecord, email: string, code: string, meta: ClientMeta): Promise<PasswordlessOutcome> {
  const row = await ctx.db.tenant(scope(project), async (tx) => {
    const found = await findForCode(tx, project.id, email);
    const check = checkOtp(ctx.config.encryptionKey, 'app-user', subject(project, email), PURPOSE, code, found ?? undefined, ctx.clock.now());
    if (check === 'wrong') await countCodeAttempt(tx, project.id, email);
    if (check !== 'valid') return null;
    await deletePasswordless(tx, project.id, email);
    return found;
  });
  if (!row) throw AuthErrors.passwordless_invalid();
  return signIn(ctx, project, row, 'otp', meta, await newAccountFields(ctx, project, row, 'code'));
}

/**
 * The account the sign-in was issued for, still holding the email it was sent to. A sign-in for
 * a new address finds the account someone created with it since (the mailbox is now proven).
 */
async function accountOf(tx: Tx, row: PasswordlessRow): Promise<UserRow | null | 'gone'> {
  if (!row.user_id) return findUserByEmail(tx, row.email);
  const user = await findUserById(tx, row.user_id);
  return user && user.email === row.email ? user : 'gone';
}

const storedSignup = (row: PasswordlessRow) => {
  const stored = row.signup_data as { data?: Record<string, unknown>; derived?: string[] };
  return { data: { ...(stored.data ?? {}) }, derived: stored.derived ?? [] };
};

/**
 * The project's before-sign-up function, for a sign-in that will create the account: run here,
 * before the sign-in's transaction (the link or code is already spent: a refusal is final).
 * Null without a function, or when the email has an account. One read more, with a function only.
 */
async function newAccountFields(ctx: AppContext, project: ProjectRecord, row: PasswordlessRow, method: 'magic-link' | 'code'): Promise<NewUserFields | null> {
  if (row.user_id || !signupAllowed(project) || !(await authHook(ctx, project.id, 'before-sign-up'))) return null;
  if (await ctx.db.read(scope(project), (db) => findUserByEmail(db, row.email))) return null;
  const schema = await usersSchemaFor(ctx, project.id);
  return signUpFields(ctx, project, schema, { method, email: row.email }, storedSignup(row));
}

async function createAccount(ctx: AppContext, tx: Tx, project: ProjectRecord, row: PasswordlessRow, fields: NewUserFields | null): Promise<UserRow> {
  if (!signupAllowed(project)) throw AuthErrors.signup_disabled();
  const { data, derived } = fields ?? storedSignup(row);
  await freeDerivedValues(tx, project.id, data, derived);
  const user = await insertUser(tx, {
    projectId: project.id, email: row.email, passwordHash: await randomPasswordHash(), emailVerified: true, data, now: ctx.clock.now(),
  });
  if (!user) throw AuthErrors.passwordless_invalid('This account was created at the same moment; please sign in again.');
  return user;
}

/** Finds or creates the account and opens its session (or its MFA challenge) in one transaction. */
async function signIn(
  ctx: AppContext, project: ProjectRecord, row: PasswordlessRow, method: 'magiclink' | 'otp', meta: ClientMeta, fields: NewUserFields | null,
): Promise<PasswordlessOutcome> {
  const out = await ctx.db.tenant(fields?.elevated ? signUpScope(project, true) : scope(project), async (tx) => {
    const found = await accountOf(tx, row);
    if (found === 'gone') throw AuthErrors.passwordless_invalid();
    if (found?.disabled_at) throw AuthErrors.user_disabled();
    // The mailbox is proven: an account whose email was never verified is claimed (claim.ts).
    const user = found ? await claimUnverified(ctx, tx, found) : await createAccount(ctx, tx, project, row, fields);
    const first = firstFactor(method, ctx.clock.now());
    const challenge = await openChallengeIfEnrolled(ctx, tx, project, user.id, first);
    if (challenge) return { user, challenge, isNewUser: false as const };
    const started = await startSession(ctx, tx, project, user.id, meta, first);
    await enqueueAuthHooks(ctx, tx, project.id, found ? 'sign-in' : 'sign-up', user, method === 'magiclink' ? 'magic-link' : 'code');
    return { user, started, isNewUser: !found };
  }).catch(rethrowTaken);
  if (out.challenge) return out;
  // The tokens after the commit: the token-claims function runs outside the transaction (a
  // refusal leaves the link or code spent and a new account created, without a session).
  return { user: out.user, tokens: await issueSession(ctx, project, out.started!, { user: out.user }), isNewUser: out.isNewUser };
}
