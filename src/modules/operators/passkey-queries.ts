/**
 * SQL of operators' passkeys and WebAuthn ceremonies (migrations/045_operator_passkeys.sql),
 * through the owner connection. The statements mirror the end users'
 * (src/modules/mfa/passkey-queries.ts).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';

type Db = Kysely<Database>;

export function listOperatorPasskeys(db: Db, operatorId: string) {
  return db
    .selectFrom('operator_passkeys')
    .select(['id', 'name', 'credential_id', 'transports', 'created_at', 'last_used_at', 'backed_up', 'backup_eligible'])
    .where('operator_id', '=', operatorId)
    .orderBy('created_at')
    .execute();
}

export function findOperatorPasskeyByCredential(db: Db, credentialId: string) {
  return db.selectFrom('operator_passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
}

export interface NewOperatorPasskey {
  id: string;
  operatorId: string;
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

/** False when the credential is already registered. */
export async function insertOperatorPasskey(db: Db, p: NewOperatorPasskey): Promise<boolean> {
  const row = await db
    .insertInto('operator_passkeys')
    .values({
      id: p.id, operator_id: p.operatorId, credential_id: p.credentialId, public_key: p.publicKey, counter: p.counter, transports: p.transports,
      rp_id: p.rpId, backup_eligible: p.backupEligible, backed_up: p.backedUp, name: p.name, created_at: p.now,
    })
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return !!row;
}

/** Records a verified use only if the counter grew (or stays 0 for authenticators without one). */
export async function recordOperatorPasskeyUse(db: Db, id: string, counter: number, backedUp: boolean, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('operator_passkeys')
    .set({ counter, backed_up: backedUp, last_used_at: now })
    .where('id', '=', id)
    .where('counter', counter === 0 ? '=' : '<', counter)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function renameOperatorPasskey(db: Db, operatorId: string, id: string, name: string): Promise<boolean> {
  const res = await db.updateTable('operator_passkeys').set({ name }).where('id', '=', id).where('operator_id', '=', operatorId).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Removes one passkey; when it was the operator's last second factor (no app either), the
 * recovery codes go too and every session falls back to aal1, in the same transaction.
 */
export async function deleteOperatorPasskey(db: Db, operatorId: string, id: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const res = await tx.deleteFrom('operator_passkeys').where('id', '=', id).where('operator_id', '=', operatorId).executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) return false;
    await dropCodesIfNoFactorLeft(tx, operatorId);
    return true;
  });
}

/** Removes the authenticator app; the last factor gone takes the recovery codes and aal2 with it. */
export async function deleteOperatorTotp(db: Db, operatorId: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('operator_totp').where('operator_id', '=', operatorId).execute();
    await dropCodesIfNoFactorLeft(tx, operatorId);
  });
}

async function dropCodesIfNoFactorLeft(tx: Db, operatorId: string): Promise<void> {
  const left = await tx
    .selectNoFrom([
      sql<boolean>`EXISTS (SELECT 1 FROM operator_totp WHERE operator_id = ${operatorId} AND verified_at IS NOT NULL)`.as('totp'),
      sql<boolean>`EXISTS (SELECT 1 FROM operator_passkeys WHERE operator_id = ${operatorId})`.as('passkeys'),
    ])
    .executeTakeFirstOrThrow();
  if (left.totp || left.passkeys) return;
  await tx.deleteFrom('operator_recovery_codes').where('operator_id', '=', operatorId).execute();
  await tx.updateTable('operator_sessions').set({ aal: 'aal1' }).where('operator_id', '=', operatorId).execute();
}

export async function insertOperatorWebauthnChallenge(db: Db, c: { challenge: string; operatorId: string | null; purpose: 'register' | 'signin'; expiresAt: Date }) {
  await db.insertInto('operator_webauthn_challenges').values({ challenge: c.challenge, operator_id: c.operatorId, purpose: c.purpose, expires_at: c.expiresAt }).execute();
}

/** Takes a ceremony's challenge out (single use); false when unknown, another purpose or operator, or expired. */
export async function takeOperatorWebauthnChallenge(db: Db, challenge: string, purpose: 'register' | 'signin', operatorId: string | null, now: Date): Promise<boolean> {
  let q = db.deleteFrom('operator_webauthn_challenges').where('challenge', '=', challenge).where('purpose', '=', purpose);
  q = operatorId === null ? q.where('operator_id', 'is', null) : q.where('operator_id', '=', operatorId);
  const row = await q.returning('expires_at').executeTakeFirst();
  return !!row && new Date(row.expires_at) > now;
}

/** Stores the WebAuthn challenge of an operator's MFA challenge (a passkey as the second factor). */
export async function setOperatorMfaWebauthnChallenge(db: Db, idHash: string, challenge: string, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('operator_mfa_challenges')
    .set({ webauthn_challenge: challenge })
    .where('id_hash', '=', idHash)
    .where('expires_at', '>', now)
    .returning('operator_id')
    .executeTakeFirst();
  return !!res;
}

export function findLiveOperatorChallenge(db: Db, idHash: string, now: Date) {
  return db.selectFrom('operator_mfa_challenges').select(['operator_id']).where('id_hash', '=', idHash).where('expires_at', '>', now).executeTakeFirst();
}

/** Expired operator MFA challenges and WebAuthn ceremonies (the crontab's clean-up). */
export async function deleteExpiredOperatorChallenges(db: Db, now: Date): Promise<void> {
  await db.deleteFrom('operator_mfa_challenges').where('expires_at', '<=', now).execute();
  await db.deleteFrom('operator_webauthn_challenges').where('expires_at', '<=', now).execute();
}
