/**
 * Find, link or create the end user behind a provider identity (contract §2.17 step 7):
 * (a) known provider id → that user; (b) no email → error; (c) same email → link, but only
 * when the provider verified the email; (d) otherwise a new user with an unguessable password.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { findUserByEmail, findUserByProvider, insertUser, linkProvider, type UserRow } from '../auth/queries.js';
import { randomPasswordHash } from '../../lib/passwords.js';
import type { UsersSchema } from '../auth/schema.js';
import type { ProjectRecord } from '../projects/cache.js';
import { SocialErrors } from './errors.js';
import { providerLabel as label, type ProviderName, type SocialProfile } from './providers.js';

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

/** Steps (a)–(c) in `tx`; null means "create a new user". */
async function findOrLink(ctx: AppContext, tx: Tx, p: ProviderName, profile: SocialProfile): Promise<SignedIn | null> {
  const known = await findUserByProvider(tx, p, profile.providerId);
  if (known) return { user: known, isNewUser: false, linkedByEmail: false };
  if (!profile.email) throw SocialErrors.no_email(`${label(p)} did not return an email address for this account.`);
  const existing = await findUserByEmail(tx, profile.email);
  if (!existing) return null;
  if (!profile.emailVerified) {
    throw SocialErrors.email_not_verified(
      `Cannot link ${label(p)} account: the provider email is not verified. Please verify your email with ${label(p)} first.`,
    );
  }
  const extra = profile.avatarUrl ? { avatarUrl: profile.avatarUrl } : {};
  const user = await linkProvider(tx, existing.id, p, profile.providerId, extra, ctx.clock.now());
  return { user, isNewUser: false, linkedByEmail: true };
}

/** Resolves the user and runs `then` (issue tokens) in the same transaction. */
export async function signInWithProvider<T>(
  ctx: AppContext,
  project: ProjectRecord,
  schema: UsersSchema,
  p: ProviderName,
  profile: SocialProfile,
  then: (tx: Tx, result: SignedIn) => Promise<T>,
): Promise<T> {
  const scope = { projectId: project.id, keyKind: 'publishable' as const };
  const found = await ctx.db.tenant(scope, async (tx) => {
    const r = await findOrLink(ctx, tx, p, profile);
    return r ? { r, out: await then(tx, r) } : null;
  });
  if (found) return found.out;
  const passwordHash = await randomPasswordHash();
  return ctx.db.tenant(scope, async (tx) => {
    const user = await insertUser(tx, {
      projectId: project.id,
      email: profile.email!,
      passwordHash,
      emailVerified: profile.emailVerified,
      data: profileData(profile, schema),
      githubId: p === 'github' ? profile.providerId : null,
      googleId: p === 'google' ? profile.providerId : null,
      authProviders: [p],
      now: ctx.clock.now(),
    });
    if (!user) throw SocialErrors.invalid_state('This account was created at the same moment; please sign in again.');
    return then(tx, { user, isNewUser: true, linkedByEmail: false });
  });
}
