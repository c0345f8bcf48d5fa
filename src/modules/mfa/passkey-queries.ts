/**
 * SQL of end users' passkey flows that is theirs alone; the passkeys and WebAuthn ceremonies
 * themselves are src/lib/identity/passkey-queries.ts (USER_PASSKEYS), shared with operators.
 */
import type { Tx } from '../../db/pool.js';

/** Stores the WebAuthn challenge of an MFA challenge (a passkey as the second factor). */
export async function setMfaWebauthnChallenge(tx: Tx, idHash: string, challenge: string): Promise<void> {
  await tx.updateTable('app_user_mfa_challenges').set({ webauthn_challenge: challenge }).where('id_hash', '=', idHash).execute();
}
