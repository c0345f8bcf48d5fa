/** SQL of social sign-in: OAuth states, rtCode exchange codes and the projects' provider settings. */
import { sql, type Kysely } from 'kysely';
import type { Tx } from '../../db/pool.js';
import type { Database } from '../../database.js';
import type { Encrypted } from '../../lib/crypto.js';

export interface NewState {
  stateHash: string;
  /** SHA-256 of the starting browser's key; null for a link state (bound to `linkUserId` instead). */
  browserHash: string | null;
  /** The signed-in guest a link flow attaches the identity to (src/modules/social/link.ts). */
  linkUserId?: string | null;
  projectId: string;
  /** 'github', 'google' or an OpenID Connect provider's id. */
  provider: string;
  codeVerifier: Encrypted;
  nonce: string | null;
  now: Date;
  expiresAt: Date;
}

export async function insertState(tx: Tx, s: NewState): Promise<void> {
  await tx
    .insertInto('social_states')
    .values({
      state_hash: s.stateHash,
      browser_hash: s.browserHash,
      project_id: s.projectId,
      provider: s.provider,
      code_verifier: JSON.stringify(s.codeVerifier) as never,
      nonce: s.nonce,
      link_user_id: s.linkUserId ?? null,
      created_at: s.now,
      expires_at: s.expiresAt,
    })
    .execute();
}

/**
 * Takes a sign-in state out (single use, even when the flow then fails). Runs on the owner
 * connection: the callback has no API key, the state itself names the project. A link state
 * is left in place (findLinkState): the app finishes it with the user's token.
 */
export async function takeState(admin: Kysely<Database>, stateHash: string) {
  return admin
    .deleteFrom('social_states')
    .where('state_hash', '=', stateHash)
    .where('link_user_id', 'is', null)
    .returning(['project_id', 'provider', 'code_verifier', 'nonce', 'browser_hash', 'expires_at'])
    .executeTakeFirst();
}

/** A link state as the callback sees it: where to send the browser (owner connection, nothing taken). */
export async function findLinkState(admin: Kysely<Database>, stateHash: string) {
  return admin
    .selectFrom('social_states')
    .select(['project_id', 'provider', 'expires_at'])
    .where('state_hash', '=', stateHash)
    .where('link_user_id', 'is not', null)
    .executeTakeFirst();
}

/**
 * Takes a link state out for the app finishing it (single use, whoever presents it): in the
 * API key's tenant scope, so another project's state is invisible (RLS).
 */
export async function takeLinkState(tx: Tx, stateHash: string) {
  return tx
    .deleteFrom('social_states')
    .where('state_hash', '=', stateHash)
    .where('link_user_id', 'is not', null)
    .returning(['provider', 'code_verifier', 'nonce', 'link_user_id', 'expires_at'])
    .executeTakeFirst();
}

export async function deleteExpiredStates(admin: Kysely<Database>, now: Date): Promise<void> {
  await admin.deleteFrom('social_states').where('expires_at', '<', now).execute();
  await admin.deleteFrom('social_exchange_codes').where('expires_at', '<', now).execute();
}

export async function insertExchangeCode(
  tx: Tx,
  c: { codeHash: string; projectId: string; userId: string; accessTokenHash: string; refreshToken: Encrypted; expiresAt: Date },
): Promise<void> {
  await tx
    .insertInto('social_exchange_codes')
    .values({
      code_hash: c.codeHash,
      project_id: c.projectId,
      user_id: c.userId,
      access_token_hash: c.accessTokenHash,
      refresh_token: JSON.stringify(c.refreshToken) as never,
      expires_at: c.expiresAt,
    })
    .execute();
}

/** Takes an exchange code out (single use); other projects' codes are invisible (RLS). */
export async function takeExchangeCode(tx: Tx, codeHash: string) {
  return tx
    .deleteFrom('social_exchange_codes')
    .where('code_hash', '=', codeHash)
    .returning(['access_token_hash', 'refresh_token', 'expires_at'])
    .executeTakeFirst();
}

/** Replaces `settings.authProviders` and merges the given encrypted secrets (owner connection). */
export async function saveProviderSettings(
  admin: Kysely<Database>,
  projectId: string,
  providers: Record<string, unknown>,
  secrets: Record<string, Encrypted>,
  now: Date,
): Promise<void> {
  await admin
    .updateTable('projects')
    .set({
      settings: sql`jsonb_set(settings, '{authProviders}', ${JSON.stringify(providers)}::jsonb)` as never,
      secrets: sql`secrets || ${JSON.stringify(secrets)}::jsonb` as never,
      updated_at: now,
    })
    .where('id', '=', projectId)
    .execute();
}

// ---- OpenID Connect identities (migrations/060_oidc_identities.sql) and provider settings ----

export interface IdentityKey {
  provider: string;
  issuer: string;
  subject: string;
}

/** The user an identity belongs to, its last sign-in noted (tenant scope). */
export async function touchIdentity(tx: Tx, k: IdentityKey, now: Date): Promise<string | null> {
  const row = await tx
    .updateTable('app_user_identities')
    .set({ last_sign_in_at: now })
    .where('provider', '=', k.provider)
    .where('issuer', '=', k.issuer)
    .where('subject', '=', k.subject)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id ?? null;
}

/** Records an identity for a user; false when it already belongs to someone (a race). */
export async function insertIdentity(tx: Tx, projectId: string, k: IdentityKey, userId: string, email: string | null, now: Date): Promise<boolean> {
  const row = await tx
    .insertInto('app_user_identities')
    .values({ project_id: projectId, provider: k.provider, issuer: k.issuer, subject: k.subject, user_id: userId, email, created_at: now, last_sign_in_at: now })
    .onConflict((oc) => oc.columns(['project_id', 'provider', 'issuer', 'subject']).doNothing())
    .returning('user_id')
    .executeTakeFirst();
  return !!row;
}

/**
 * A guest's provider email becomes its (verified) email and the guest is no longer anonymous;
 * null when the user is not (or no longer) a guest. A taken email fails on app_users_email_idx.
 */
export async function giveGuestEmail(tx: Tx, userId: string, email: string, now: Date): Promise<boolean> {
  const row = await tx
    .updateTable('app_users')
    .set({ email, email_verified: true, is_anonymous: false, updated_at: now })
    .where('id', '=', userId)
    .where('is_anonymous', '=', true)
    .returning('id')
    .executeTakeFirst();
  return !!row;
}

/** The provider joins the user's `auth_providers`, the email counts as verified, the avatar fills a gap. */
export async function markIdentityLinked(tx: Tx, userId: string, provider: string, extra: Record<string, unknown>, now: Date): Promise<void> {
  await tx
    .updateTable('app_users')
    .set({
      auth_providers: sql`(SELECT array_agg(DISTINCT p) FROM unnest(auth_providers || ARRAY[${provider}]::text[]) p)` as never,
      email_verified: true,
      data: sql`${JSON.stringify(extra)}::jsonb || data` as never,
      updated_at: now,
    })
    .where('id', '=', userId)
    .execute();
}

/**
 * Sets one OpenID Connect provider in `settings.oidcProviders` in one statement (concurrent
 * saves of other providers are kept) and, when given, its encrypted secret.
 */
export async function saveOidcProvider(
  admin: Kysely<Database>, projectId: string, id: string, setting: Record<string, unknown>, secret: { name: string; value: Encrypted } | null, now: Date,
): Promise<void> {
  const secrets = secret ? { [secret.name]: secret.value } : {};
  await admin
    .updateTable('projects')
    .set({
      settings: sql`jsonb_set(settings, '{oidcProviders}', coalesce(settings -> 'oidcProviders', '{}'::jsonb) || jsonb_build_object(${id}::text, ${JSON.stringify(setting)}::jsonb))` as never,
      secrets: sql`secrets || ${JSON.stringify(secrets)}::jsonb` as never,
      updated_at: now,
    })
    .where('id', '=', projectId)
    .execute();
}

/** Removes one provider and its secret; false when the project had none by that id. */
export async function deleteOidcProvider(admin: Kysely<Database>, projectId: string, id: string, secretName: string, now: Date): Promise<boolean> {
  const res = await admin
    .updateTable('projects')
    .set({
      settings: sql`jsonb_set(settings, '{oidcProviders}', (settings -> 'oidcProviders') - ${id}::text)` as never,
      secrets: sql`secrets - ${secretName}::text` as never,
      updated_at: now,
    })
    .where('id', '=', projectId)
    .where(sql<boolean>`settings -> 'oidcProviders' ? ${id}::text`)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
