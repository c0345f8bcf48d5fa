/** SQL of the console's GitHub sign-in (migrations/074_operator_sign_in.sql), through the owner connection. */
import type { Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { Encrypted } from '../../lib/crypto.js';

type Db = Kysely<Database>;

/** Stores a sign-in in flight, and drops the expired ones (a handful at most) in passing. */
export async function insertOperatorOauthState(db: Db, s: { stateHash: string; browserHash: string; codeVerifier: Encrypted; now: Date; expiresAt: Date; linkOperatorId: string | null }): Promise<void> {
  await db.deleteFrom('operator_oauth_states').where('expires_at', '<', s.now).execute();
  await db
    .insertInto('operator_oauth_states')
    .values({ state_hash: s.stateHash, browser_hash: s.browserHash, code_verifier: JSON.stringify(s.codeVerifier) as never, created_at: s.now, expires_at: s.expiresAt, link_operator_id: s.linkOperatorId })
    .execute();
}

/** Takes a state out: one statement, so of two callbacks with the same state only one gets it. */
export function takeOperatorOauthState(db: Db, stateHash: string) {
  return db.deleteFrom('operator_oauth_states').where('state_hash', '=', stateHash).returning(['browser_hash', 'code_verifier', 'expires_at', 'link_operator_id']).executeTakeFirst();
}

export function findOperatorByIdentity(db: Db, provider: 'github', subject: string) {
  return db.selectFrom('operator_identities').select(['operator_id']).where('provider', '=', provider).where('subject', '=', subject).executeTakeFirst();
}

/**
 * Links the identity to the operator, or notes a sign-in with it (last_sign_in_at, email). An
 * operator linked to another account of the provider keeps that link: false then.
 */
export async function linkOperatorIdentity(db: Db, i: { provider: 'github'; subject: string; operatorId: string; email: string | null; now: Date }): Promise<boolean> {
  const res = await db
    .insertInto('operator_identities')
    .values({ provider: i.provider, subject: i.subject, operator_id: i.operatorId, email: i.email, created_at: i.now, last_sign_in_at: i.now })
    .onConflict((oc) => oc.columns(['provider', 'subject']).doUpdateSet({ last_sign_in_at: i.now, email: i.email }).where('operator_identities.operator_id', '=', i.operatorId))
    .returning('operator_id')
    .executeTakeFirst()
    .catch((err: { code?: string }) => {
      if (err.code === '23505') return undefined; // UNIQUE (operator_id, provider): linked to another GitHub account
      throw err;
    });
  return res !== undefined;
}

export function operatorIdentitiesOf(db: Db, operatorId: string) {
  return db.selectFrom('operator_identities').select(['provider', 'email', 'created_at', 'last_sign_in_at']).where('operator_id', '=', operatorId).orderBy('provider').execute();
}

/**
 * Unlinks the operator's identity at the provider, and stops a later sign-in with the same
 * verified email from linking it again; how many identities went (0: none was linked).
 */
export async function unlinkOperatorIdentity(db: Db, operatorId: string, provider: 'github'): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const res = await tx.deleteFrom('operator_identities').where('operator_id', '=', operatorId).where('provider', '=', provider).executeTakeFirst();
    await tx.updateTable('operators').set({ github_link_by_email: false }).where('id', '=', operatorId).execute();
    return Number(res.numDeletedRows);
  });
}

/** Whether a GitHub sign-in with the operator's verified email may link the account by itself. */
export async function githubLinkByEmail(db: Db, operatorId: string): Promise<boolean> {
  const r = await db.selectFrom('operators').select('github_link_by_email').where('id', '=', operatorId).executeTakeFirst();
  return r?.github_link_by_email === true;
}

export function allowGithubLinkByEmail(db: Db, operatorId: string) {
  return db.updateTable('operators').set({ github_link_by_email: true }).where('id', '=', operatorId).execute();
}
