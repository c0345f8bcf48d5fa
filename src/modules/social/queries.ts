/** SQL of social sign-in: OAuth states, rtCode exchange codes and the projects' provider settings. */
import { sql, type Kysely } from 'kysely';
import type { Tx } from '../../db/pool.js';
import type { Database } from '../../database.js';
import type { Encrypted } from '../../lib/crypto.js';
import type { ProviderName } from './providers.js';

export interface NewState {
  stateHash: string;
  browserHash: string;
  projectId: string;
  provider: ProviderName;
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
      created_at: s.now,
      expires_at: s.expiresAt,
    })
    .execute();
}

/**
 * Takes a state out (single use, even when the flow then fails). Runs on the owner connection:
 * the callback has no API key, the state itself names the project.
 */
export async function takeState(admin: Kysely<Database>, stateHash: string) {
  return admin
    .deleteFrom('social_states')
    .where('state_hash', '=', stateHash)
    .returning(['project_id', 'provider', 'code_verifier', 'nonce', 'browser_hash', 'expires_at'])
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
