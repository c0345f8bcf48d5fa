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
