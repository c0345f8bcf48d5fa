/**
 * Find, link or create the end user behind a provider identity (docs/wire-compatibility.md §2.17 step 7):
 * (a) known provider id → that user; (b) no email, or one the provider has not verified →
 * error (an unverified address never creates or links an account); (c) same email → link;
 * (d) otherwise a new user with an unguessable password. The project's
 * `requireEmailVerification` turns unverified users away as login does.
 *
 * Pre-account takeover: when (c) finds an account whose email was never verified, whoever
 * created it did not prove the mailbox, and the provider has just proven it belongs to the
 * person signing in. That account's password is replaced by an unusable one and all its
 * refresh sessions are revoked before linking, so a squatter who signed up with someone
 * else's address loses every way back in; the owner sets a password by reset if they want one
 * (src/modules/auth/claim.ts, shared with passwordless sign-in).
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { claimUnverified } from '../auth/claim.js';
import { findUserByEmail, findUserById, findUserByProvider, insertUser, linkProvider, type UserRow } from '../auth/queries.js';
import { enqueueAuthHooks } from '../functions/auth-events.js';
import { freeDerivedValues, rethrowTaken } from '../auth/unique.js';
import { randomPasswordHash } from '../../lib/passwords.js';
import type { UsersSchema } from '../auth/schema.js';
import { signUpFields, signUpScope } from '../auth/sign-up-hook.js';
import type { ProjectRecord } from '../projects/cache.js';
import { SocialErrors } from './errors.js';
import { providerLabel, type ProviderName, type SocialProfile } from './providers.js';
import { giveGuestEmail, insertIdentity, markIdentityLinked, touchIdentity } from './queries.js';
import { AuthErrors } from '../auth/errors.js';
import { isUniqueViolation } from '../../db/errors.js';
import { IdentityErrors } from '../../lib/identity/errors.js';

/** One of the project's OpenID Connect providers, and the issuer that vouched for the person. */
export interface OidcRef {
  id: string;
  label: string;
  issuer: string;
}

/** GitHub or Google (columns of app_users), or an OpenID Connect provider (app_user_identities). */
export type ProviderRef = ProviderName | OidcRef;

const label = (p: ProviderRef) => (typeof p === 'string' ? providerLabel(p) : p.label);
const nameOf = (p: ProviderRef) => (typeof p === 'string' ? p : p.id);

export interface SignedIn {
  user: UserRow;
  isNewUser: boolean;
  linkedByEmail: boolean;
}

function profileData(profile: SocialProfile, schema: UsersSchema): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  if (profile.name) data.name = profile.name;
  if (profile.username) data.username = profile.username.padEnd(3, '0').slice(0, 50);
  if (profile.avatarUrl) data.avatarUrl = profile.avatarUrl;
  const base = (profile.email ?? '').split('@')[0]!.padEnd(3, '0').slice(0, 50);
  for (const key of ['name', 'username']) {
    if (schema.fields.some((f) => f.key === key && f.required) && !data[key]) data[key] = base;
  }
  return data;
}

function unverifiedEmail(p: ProviderRef, existing: UserRow | null) {
  const what = existing ? `Cannot link ${label(p)} account` : `Cannot sign in with ${label(p)}`;
  return IdentityErrors.email_not_verified(`${what}: the provider email is not verified. Please verify your email with ${label(p)} first.`);
}

/** Steps (a)–(c) in `tx`; null means "create a new user". */
async function knownUser(ctx: AppContext, tx: Tx, p: ProviderRef, profile: SocialProfile): Promise<UserRow | null> {
  if (typeof p === 'string') return findUserByProvider(tx, p, profile.providerId);
  const userId = await touchIdentity(tx, { provider: p.id, issuer: p.issuer, subject: profile.providerId }, ctx.clock.now());
  return userId ? findUserById(tx, userId) : null;
}

async function link(ctx: AppContext, tx: Tx, projectId: string, user: UserRow, p: ProviderRef, profile: SocialProfile): Promise<UserRow> {
  const extra = profile.avatarUrl ? { avatarUrl: profile.avatarUrl } : {};
  if (typeof p === 'string') return linkProvider(tx, user.id, p, profile.providerId, extra, ctx.clock.now());
  const now = ctx.clock.now();
  const key = { provider: p.id, issuer: p.issuer, subject: profile.providerId };
  if (!(await insertIdentity(tx, projectId, key, user.id, profile.email, now))) {
    throw SocialErrors.invalid_state('This account was linked at the same moment; please sign in again.');
  }
  await markIdentityLinked(tx, user.id, p.id, extra, now);
  return (await findUserById(tx, user.id))!;
}

async function findOrLink(ctx: AppContext, tx: Tx, projectId: string, p: ProviderRef, profile: SocialProfile): Promise<SignedIn | null> {
  const known = await knownUser(ctx, tx, p, profile);
  if (known) return { user: known, isNewUser: false, linkedByEmail: false };
  if (!profile.email) throw SocialErrors.no_email(`${label(p)} did not return an email address for this account.`);
  const existing = await findUserByEmail(tx, profile.email);
  if (!profile.emailVerified) throw unverifiedEmail(p, existing);
  if (!existing) return null;
  const user = await link(ctx, tx, projectId, await claimUnverified(ctx, tx, existing), p, profile);
  return { user, isNewUser: false, linkedByEmail: true };
}

/** `requireEmailVerification` applies to social sign-in exactly as to login. */
function checkVerified(project: ProjectRecord, user: UserRow): void {
  if (project.settings.requireEmailVerification === true && !user.email_verified) throw IdentityErrors.email_not_verified();
}

/** Resolves the user and runs `then` (issue tokens) in the same transaction. */
export async function signInWithProvider<T>(
  ctx: AppContext,
  project: ProjectRecord,
  schema: UsersSchema,
  p: ProviderRef,
  profile: SocialProfile,
  then: (tx: Tx, result: SignedIn) => Promise<T>,
): Promise<T> {
  const scope = { projectId: project.id, keyKind: 'publishable' as const, account: true };
  const found = await ctx.db.tenant(scope, async (tx) => {
    const r = await findOrLink(ctx, tx, project.id, p, profile);
    if (r) checkVerified(project, r.user);
    return r ? { r, out: await then(tx, r) } : null;
  }).catch(rethrowTaken);
  if (found) return found.out;
  // A new user: the project's before-sign-up function first, outside any transaction.
  const { data, derived, elevated } = await signUpFields(
    ctx, project, schema,
    { method: typeof p === 'string' ? 'social' : 'oidc', email: profile.email, provider: nameOf(p) },
    { data: profileData(profile, schema), derived: ['name', 'username'] }, // the provider's names, not chosen here
  );
  const passwordHash = await randomPasswordHash();
  return ctx.db.tenant(elevated ? signUpScope(project, true) : scope, async (tx) => {
    await freeDerivedValues(tx, project.id, data, derived);
    const user = await insertUser(tx, {
      projectId: project.id,
      email: profile.email!,
      passwordHash,
      emailVerified: true, // findOrLink refused unverified provider emails
      data,
      githubId: p === 'github' ? profile.providerId : null,
      googleId: p === 'google' ? profile.providerId : null,
      authProviders: [nameOf(p)],
      now: ctx.clock.now(),
    });
    if (!user) throw SocialErrors.invalid_state('This account was created at the same moment; please sign in again.');
    if (typeof p !== 'string') {
      const key = { provider: p.id, issuer: p.issuer, subject: profile.providerId };
      if (!(await insertIdentity(tx, project.id, key, user.id, profile.email, ctx.clock.now()))) {
        throw SocialErrors.invalid_state('This account was created at the same moment; please sign in again.');
      }
    }
    await enqueueAuthHooks(ctx, tx, project.id, 'sign-up', user, typeof p === 'string' ? 'social' : 'oidc');
    return then(tx, { user, isNewUser: true, linkedByEmail: false });
  }).catch(rethrowTaken);
}

/** The unique indexes a link can meet: the email (another user's) and the provider ids (another user's identity). */
function rethrowLinkConflict(err: unknown): never {
  if (isUniqueViolation(err)) {
    const constraint = (err as { constraint?: unknown }).constraint;
    if (constraint === 'app_users_email_idx') throw AuthErrors.email_taken();
    if (constraint === 'app_users_github_idx' || constraint === 'app_users_google_idx') throw SocialErrors.identity_taken();
  }
  return rethrowTaken(err);
}

/**
 * Attaches a provider identity to the signed-in guest `userId` (src/modules/social/link.ts):
 * the same user id, so its documents and files stay its own; it gets the provider's verified
 * email and is no longer anonymous. Refused, with the guest left a guest and nothing else
 * changed: an identity that already belongs to a user (409 identity_taken: no account
 * takeover, and no merge of two accounts); no email or an unverified one (as for sign-in: an
 * unverified address never links anything); an email another user holds (409 email_taken: the
 * guest is not merged into that account, verified or not); a user who is not a guest (or is
 * disabled).
 */
export async function linkToGuest(ctx: AppContext, project: ProjectRecord, userId: string, p: ProviderRef, profile: SocialProfile): Promise<UserRow> {
  return ctx.db.tenant({ projectId: project.id, userId, keyKind: 'publishable', account: true }, async (tx) => {
    const guest = await findUserById(tx, userId);
    if (!guest?.is_anonymous) throw AuthErrors.user_not_anonymous();
    if (guest.disabled_at) throw AuthErrors.user_disabled();
    if (await knownUser(ctx, tx, p, profile)) throw SocialErrors.identity_taken();
    if (!profile.email) throw SocialErrors.no_email(`${label(p)} did not return an email address for this account.`);
    const holder = await findUserByEmail(tx, profile.email);
    if (!profile.emailVerified) throw unverifiedEmail(p, holder);
    if (holder) throw AuthErrors.email_taken();
    if (!(await giveGuestEmail(tx, userId, profile.email, ctx.clock.now()))) throw AuthErrors.user_not_anonymous();
    return link(ctx, tx, project.id, guest, p, profile);
  }).catch(rethrowLinkConflict);
}
