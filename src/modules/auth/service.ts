/** End-user accounts: sign-up, login, profile, password change. Knows no HTTP. */
import type { AppContext } from '../../context.js';
import type { TokenUser } from './user-auth.js';
import type { ProjectRecord } from '../projects/cache.js';
import { AuthErrors } from './errors.js';
import { RuleErrors } from '../rules/errors.js';
import { sqlState } from '../../db/errors.js';
import { hashPassword, verifyPassword } from '../../lib/passwords.js';
import { findUserByEmail, findUserById, findUserByUsername, insertAccount, setPasswordHash, updateUserData, type PublicUserRow, type UserRow } from './queries.js';
import type { UsersSchema } from './schema.js';
import { revokeUserSessions } from './session-queries.js';
import { issueSession, newSession, startSession, type ClientMeta, type Tokens } from './sessions.js';
import { newUserData, profileUpdate } from './users.js';
import { signUpFields, signUpScope } from './sign-up-hook.js';
import { mailOtp, newUserOtp } from './otp.js';
import { randomObjectId } from '../../lib/ids.js';
import { freeDerivedValues, rethrowTaken } from './unique.js';
import { IdentityErrors } from '../../lib/identity/errors.js';
import { firstFactor } from '../../lib/identity/assurance.js';
import { openChallengeIfEnrolled, type OpenedChallenge } from '../mfa/challenge.js';
import { assertAal2IfEnrolled } from '../mfa/policy.js';
import type { UserTokenClaims } from './tokens.js';
import { enqueueAuthHooks } from '../functions/auth-events.js';

/** The auth flows, acting for the one account they authenticate: not governed by the users rules (migrations/063). */
const scope = (project: ProjectRecord, userId?: string) => ({ projectId: project.id, userId: userId ?? null, keyKind: 'publishable' as const, account: true });
/** A publishable caller reading or writing users as data: under the users collection's access rules (docs/rules.md). */
/** A publishable caller, with their token's custom claims when it has any (the users collection's rules may read `@auth.claims.*`). */
const asCaller = (project: ProjectRecord, userId: string | null, claims?: string | null) => ({ projectId: project.id, userId, keyKind: 'publishable' as const, ...(userId && claims ? { claims } : {}) });

export interface SignupInput {
  email: string;
  password: string;
  body: Record<string, unknown>;
}

/**
 * One transaction of four round trips: BEGIN, the account (user, session and verification code
 * in one statement), its verification mail queued, COMMIT. An account never exists without
 * its code and its mail, and sign-up pays one commit (a WAL flush), not two.
 */
export async function signup(ctx: AppContext, project: ProjectRecord, schema: UsersSchema, input: SignupInput, meta: ClientMeta) {
  // The project's before-sign-up function, if any, before anything is written or mailed.
  const { data, derived, elevated } = await signUpFields(ctx, project, schema, { method: 'password', email: input.email }, newUserData(schema, input.email, input.body));
  const passwordHash = await hashPassword(input.password);
  const now = ctx.clock.now();
  const id = randomObjectId(now.getTime());
  const session = newSession(ctx, project.id, id, meta);
  const otp = newUserOtp(ctx, project.id, id, 'verify_email');
  const user = await ctx.db.tenant(signUpScope(project, elevated), async (tx) => {
    await freeDerivedValues(tx, project.id, data, derived);
    const account = { id, projectId: project.id, email: input.email, passwordHash, emailVerified: false, data, now };
    const created = await insertAccount(tx, { user: account, session: session.row, otp: otp.row });
    if (created) await mailOtp(ctx, project, created, 'verify_email', otp.code, tx, meta.acceptLanguage);
    if (created) await enqueueAuthHooks(ctx, tx, project.id, 'sign-up', created, 'password');
    return created;
  }).catch(rethrowTaken);
  if (!user) throw AuthErrors.email_taken();
  // The code leaves by mail only, never in the answer.
  // A token-claims function that refuses here leaves the account (committed) without this session.
  return { user, tokens: await issueSession(ctx, project, { session, anonymous: false }, { user }) };
}

export type LoginOutcome = { user: UserRow; tokens: Tokens; challenge?: undefined } | { user: UserRow; challenge: OpenedChallenge; tokens?: undefined };

/**
 * The password step. A user with a second factor gets an MFA challenge and no tokens
 * (src/modules/mfa/challenge.ts); anyone else a session at aal1.
 */
export async function login(ctx: AppContext, project: ProjectRecord, email: string, password: string, meta: ClientMeta): Promise<LoginOutcome> {
  const user = await ctx.db.read(scope(project), (db) => findUserByEmail(db, email));
  const ok = await verifyPassword(user?.password_hash ?? null, password);
  if (!ok || !user) throw IdentityErrors.invalid_credentials();
  if (user.disabled_at) throw AuthErrors.user_disabled();
  if (project.settings.requireEmailVerification === true && !user.email_verified) throw IdentityErrors.email_not_verified();
  // Autocommit statements, no transaction round trips: the factor lookup, then one INSERT. The
  // tokens after, with the connection back in the pool (a token-claims function may take a while).
  const opened = await ctx.db.read(scope(project, user.id), async (db) => {
    const challenge = await openChallengeIfEnrolled(ctx, db, project, user.id, firstFactor('pwd', ctx.clock.now()));
    if (challenge) return { challenge };
    const started = await startSession(ctx, db, project, user.id, meta);
    await enqueueAuthHooks(ctx, db, project.id, 'sign-in', user, 'password');
    return { started };
  });
  if (opened.challenge) return { user, challenge: opened.challenge };
  return { user, tokens: await issueSession(ctx, project, opened.started, { user }) };
}

export async function currentUser(ctx: AppContext, project: ProjectRecord, userId: string): Promise<UserRow> {
  const user = await ctx.db.read(scope(project, userId), (db) => findUserById(db, userId));
  if (!user) throw AuthErrors.user_not_found();
  return user;
}

/**
 * The user's own profile fields, written as a publishable caller: the users collection's
 * `update` rule decides (by default, a user's own row), as for raw SQL in a publishable scope,
 * and read-only fields are refused by the app_users trigger as well as here.
 */
export async function updateProfile(ctx: AppContext, project: ProjectRecord, schema: UsersSchema, userId: string, body: Record<string, unknown>, claims?: string | null): Promise<void> {
  const changes = profileUpdate(schema, body);
  const changed = await ctx.db
    .tenant(asCaller(project, userId, claims), (tx) => (Object.keys(changes).length ? updateUserData(tx, userId, changes, ctx.clock.now()) : Promise.resolve(-1)))
    .catch((err: unknown) => {
      if (sqlState(err) === '42501' && /row-level security/.test(String((err as Error).message))) throw RuleErrors.rule_denied();
      return rethrowTaken(err);
    });
  if (changed > 0) return;
  // Nothing changed (or nothing asked): a user gone is 404; one the rules refuse is 403.
  if (!(await ctx.db.read(scope(project, userId), (db) => findUserById(db, userId)))) throw AuthErrors.user_not_found();
  if (changed === 0) throw RuleErrors.rule_denied("The users collection's access rules do not allow this profile change.");
}

/**
 * Checks the current password, stores the new one and revokes every session of the user. A
 * user with a second factor must act from an aal2 session (a stolen password and aal1 token
 * must not lock the owner out), whatever the project's policy.
 */
export async function changePassword(ctx: AppContext, project: ProjectRecord, claims: UserTokenClaims, current: string, next: string): Promise<void> {
  await assertAal2IfEnrolled(ctx, project, claims);
  const { userId } = claims;
  const user = await currentUser(ctx, project, userId);
  if (!(await verifyPassword(user.password_hash, current))) throw AuthErrors.invalid_current_password();
  const hash = await hashPassword(next);
  await ctx.db.tenant(scope(project, userId), async (tx) => {
    const now = ctx.clock.now();
    await setPasswordHash(tx, userId, hash, now);
    await revokeUserSessions(tx, userId, now);
  });
}

/** A user by username, as the caller (`callerId`: signed in, or null) may see users under the users rules. */
export async function publicProfile(ctx: AppContext, project: ProjectRecord, schema: UsersSchema, username: string, caller: TokenUser | null): Promise<PublicUserRow> {
  if (!schema.hasUsername) throw AuthErrors.username_field_missing();
  const user = await ctx.db.read(asCaller(project, caller?.id ?? null, caller?.claims), (db) => findUserByUsername(db, username));
  if (!user) throw AuthErrors.user_not_found();
  return user;
}
