/** SQL of end users' passkeys and WebAuthn challenges, in the project's tenant scope. */
import type { Tx } from '../../db/pool.js';

export async function listPasskeys(tx: Tx, userId: string) {
  return tx
    .selectFrom('app_user_passkeys')
    .select(['id', 'name', 'credential_id', 'transports', 'created_at', 'last_used_at', 'backed_up', 'backup_eligible'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
}

export async function findPasskeyByCredential(tx: Tx, credentialId: string) {
  return tx.selectFrom('app_user_passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
}

export interface NewPasskey {
  id: string;
  projectId: string;
  userId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  rpId: string;
  backupEligible: boolean;
  backedUp: boolean;
  name: string;
  now: Date;
}

/** False when the credential is already registered in this project. */
export async function insertPasskey(tx: Tx, p: NewPasskey): Promise<boolean> {
  const row = await tx
    .insertInto('app_user_passkeys')
    .values({
      id: p.id, project_id: p.projectId, user_id: p.userId, credential_id: p.credentialId, public_key: p.publicKey, counter: p.counter,
      transports: p.transports, rp_id: p.rpId, backup_eligible: p.backupEligible, backed_up: p.backedUp, name: p.name, created_at: p.now,
    })
    .onConflict((oc) => oc.columns(['project_id', 'credential_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return !!row;
}

/**
 * Records a verified use: only if the counter grew (or stays 0 for authenticators without one),
 * so two concurrent uses of one signed assertion cannot both pass.
 */
export async function recordPasskeyUse(tx: Tx, id: string, counter: number, backedUp: boolean, now: Date): Promise<boolean> {
  const res = await tx
    .updateTable('app_user_passkeys')
    .set({ counter, backed_up: backedUp, last_used_at: now })
    .where('id', '=', id)
    .where('counter', counter === 0 ? '=' : '<', counter)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function renamePasskey(tx: Tx, userId: string, id: string, name: string): Promise<boolean> {
  const res = await tx.updateTable('app_user_passkeys').set({ name }).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function deletePasskey(tx: Tx, userId: string, id: string): Promise<boolean> {
  const res = await tx.deleteFrom('app_user_passkeys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export async function insertWebauthnChallenge(tx: Tx, c: { challenge: string; projectId: string; userId: string | null; purpose: 'register' | 'signin'; expiresAt: Date }) {
  await tx
    .insertInto('app_user_webauthn_challenges')
    .values({ challenge: c.challenge, project_id: c.projectId, user_id: c.userId, purpose: c.purpose, expires_at: c.expiresAt })
    .execute();
}

/** Takes a ceremony's challenge out (single use); null when unknown, another purpose or user, or expired. */
export async function takeWebauthnChallenge(tx: Tx, challenge: string, purpose: 'register' | 'signin', userId: string | null, now: Date) {
  let q = tx.deleteFrom('app_user_webauthn_challenges').where('challenge', '=', challenge).where('purpose', '=', purpose);
  q = userId === null ? q.where('user_id', 'is', null) : q.where('user_id', '=', userId);
  const row = await q.returning('expires_at').executeTakeFirst();
  return row && new Date(row.expires_at) > now ? row : null;
}

/** Stores the WebAuthn challenge of an MFA challenge (a passkey as the second factor). */
export async function setMfaWebauthnChallenge(tx: Tx, idHash: string, challenge: string): Promise<void> {
  await tx.updateTable('app_user_mfa_challenges').set({ webauthn_challenge: challenge }).where('id_hash', '=', idHash).execute();
}
