/**
 * SQL of operators' passkey flows that is theirs alone (migrations/045_operator_passkeys.sql),
 * through the owner connection: removing a factor, the passkey of an MFA challenge, the
 * clean-up. The passkeys and WebAuthn ceremonies themselves are
 * src/lib/identity/passkey-queries.ts (OPERATOR_PASSKEYS), shared with end users.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import { deletePasskey, OPERATOR_PASSKEYS } from '../../lib/identity/passkey-queries.js';

type Db = Kysely<Database>;

/**
 * Removes one passkey; when it was the operator's last second factor (no app either), the
 * recovery codes go too and every session falls back to aal1, in the same transaction.
 */
export async function deleteOperatorPasskey(db: Db, operatorId: string, id: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    if (!(await deletePasskey(tx, OPERATOR_PASSKEYS, operatorId, id))) return false;
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
