/**
 * Anonymous (guest) users (docs/auth.md "Anonymous users"): a sign-in with no email that
 * returns normal tokens (claim `isAnonymous: true`) for a user marked `is_anonymous`. The app
 * later links an email and password (here), a passkey (src/modules/mfa/passkeys.ts) or a social
 * identity (src/modules/social/link.ts) to the same user id, so everything the guest owns stays
 * theirs; linking an identity that belongs to another user is refused. Projects opt in
 * (`allowAnonymous`); unused guests are removed by a crontab job (anonymous-cleanup.ts).
 */
import type { AppContext } from '../../context.js';
import { isUniqueViolation } from '../../db/errors.js';
import { firstFactor } from '../../lib/identity/assurance.js';
import { hashPassword } from '../../lib/passwords.js';
import type { ProjectRecord } from '../projects/cache.js';
import { AuthErrors } from './errors.js';
import { mailOtp, newUserOtp } from './otp.js';
import { findUserByEmail, findUserById, insertUser, linkEmailToAnonymous, updateUserData, upsertOtp, type UserRow } from './queries.js';
import { usersSchemaFor, type UsersSchema } from './schema.js';
import { signUpFields, signUpScope } from './sign-up-hook.js';
import { authHook } from '../functions/auth-hooks.js';
import { accessTokenFor, issueSession, startSession, type ClientMeta, type Tokens } from './sessions.js';
import { enqueueAuthHooks } from '../functions/auth-events.js';
import { anonymousAllowed, signupAllowed } from './sign-in-settings.js';
import type { UserTokenClaims } from './tokens.js';
import { freeDerivedValues, rethrowTaken } from './unique.js';

/**
 * The password column of a guest: not an argon2 hash, so no password ever matches it (argon2
 * refuses to verify it). Guests have no email, so login never reaches them; linking an email
 * sets a real hash in the same statement.
 */
const NO_PASSWORD = '!anonymous';

const scope = (project: ProjectRecord, userId?: string) => ({ projectId: project.id, userId: userId ?? null, keyKind: 'publishable' as const, account: true });

/** Required `name`/`username` of the users schema, for a guest: `guest` (made unique by a suffix). */
function guestData(schema: UsersSchema): { data: Record<string, unknown>; derived: string[] } {
  const data: Record<string, unknown> = {};
  for (const key of ['name', 'username']) {
    if (schema.fields.some((f) => f.key === key && f.required)) data[key] = 'guest';
  }
  return { data, derived: Object.keys(data) };
}

/**
 * A new guest and its first session (amr `anonymous`), in one transaction; its tokens after the
 * commit (the token-claims function runs outside it: a refusal leaves a guest without a
 * session, which the anonymous clean-up removes).
 */
export async function signInAnonymously(ctx: AppContext, project: ProjectRecord, schema: UsersSchema, meta: ClientMeta): Promise<{ user: UserRow; tokens: Tokens }> {
  if (!anonymousAllowed(project)) throw AuthErrors.anonymous_disabled();
  const { data, derived, elevated } = await signUpFields(ctx, project, schema, { method: 'anonymous', email: null }, guestData(schema));
  const { user, started } = await ctx.db.tenant(signUpScope(project, elevated), async (tx) => {
    await freeDerivedValues(tx, project.id, data, derived);
    const now = ctx.clock.now();
    const user = await insertUser(tx, { projectId: project.id, email: null, passwordHash: NO_PASSWORD, emailVerified: false, data, isAnonymous: true, now });
    if (!user) throw new Error('an anonymous user conflicted on a null email');
    const started = await startSession(ctx, tx, project, user.id, meta, firstFactor('anonymous', now));
    await enqueueAuthHooks(ctx, tx, project.id, 'sign-up', user, 'guest');
    return { user, started };
  }).catch(rethrowTaken);
  return { user, tokens: await issueSession(ctx, project, started, { user }) };
}

/** The fields the before-sign-up function changes when a guest links an email (null: no function, or no change). */
async function linkHook(ctx: AppContext, project: ProjectRecord, guest: UserRow, email: string): Promise<{ changes: Record<string, unknown>; elevated: boolean } | null> {
  if (!(await authHook(ctx, project.id, 'before-sign-up'))) return null;
  const schema = await usersSchemaFor(ctx, project.id);
  const current = { data: guest.data, derived: [] };
  const out = await signUpFields(ctx, project, schema, { method: 'link-email', email, userId: guest.id }, current);
  const changes: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(out.data)) if (JSON.stringify(v) !== JSON.stringify(guest.data[k])) changes[k] = v;
  return { changes, elevated: out.elevated };
}

/**
 * Links an email and a password to the signed-in guest: the same user id, no longer anonymous,
 * email unverified (a verification code is mailed, as at sign-up). An email another user holds
 * is refused (409 email_taken, as sign-up answers): no guest can take over an account. Returns
 * a fresh access token of the caller's session, which now says `isAnonymous: false`.
 */
export async function linkEmail(
  ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims, email: string, password: string,
): Promise<{ user: UserRow; accessToken: string | null }> {
  if (!signupAllowed(project)) throw AuthErrors.signup_disabled();
  const { userId } = caller;
  const current = await ctx.db.read(scope(project, userId), (db) => findUserById(db, userId));
  if (!current) throw AuthErrors.user_not_found();
  if (!current.is_anonymous) throw AuthErrors.user_not_anonymous();
  // The guest becomes a full account: the before-sign-up function decides, as for a sign-up.
  const hooked = await linkHook(ctx, project, current, email);
  const passwordHash = await hashPassword(password);
  const user = await ctx.db.tenant(signUpScope(project, hooked?.elevated === true, userId), async (tx) => {
    if (await findUserByEmail(tx, email)) throw AuthErrors.email_taken();
    const now = ctx.clock.now();
    let linked = await linkEmailToAnonymous(tx, userId, email, passwordHash, now);
    if (!linked) throw AuthErrors.user_not_anonymous();
    if (hooked && Object.keys(hooked.changes).length > 0) {
      await updateUserData(tx, userId, hooked.changes, now);
      linked = (await findUserById(tx, userId)) ?? linked;
    }
    const otp = newUserOtp(ctx, project.id, userId, 'verify_email');
    await upsertOtp(tx, otp.row);
    await mailOtp(ctx, project, linked, 'verify_email', otp.code, tx);
    return linked;
  }).catch((err: unknown) => {
    if (isUniqueViolation(err) && (err as { constraint?: unknown }).constraint === 'app_users_email_idx') throw AuthErrors.email_taken();
    throw err;
  });
  const accessToken = caller.sid ? await accessTokenFor(ctx, project, userId, { sid: caller.sid, aal: caller.aal, amr: caller.amr, anonymous: false }) : null;
  return { user, accessToken };
}
