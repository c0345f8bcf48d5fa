/** End users' adapter of the shared WebAuthn ceremony (src/lib/identity/passkey-ceremony.ts): a project's passkeys, in its tenant scope. */
import type { Tx } from '../../db/pool.js';
import type { PasskeyStore } from '../../lib/identity/passkey-ceremony.js';
import { findPasskeyByCredential, insertWebauthnChallenge, listPasskeys, recordPasskeyUse, takeWebauthnChallenge } from './passkey-queries.js';
import { storedOf } from './relying-party.js';

export function userPasskeyStore(db: Tx, projectId: string): PasskeyStore {
  return {
    list: async (userId) => (await listPasskeys(db, userId)).map((p) => storedOf(p)),
    findByCredential: async (credentialId) => {
      const row = await findPasskeyByCredential(db, credentialId);
      return row && { ...storedOf(row), id: row.id, ownerId: row.user_id };
    },
    recordUse: (id, counter, backedUp, now) => recordPasskeyUse(db, id, counter, backedUp, now),
    insertChallenge: (c) => insertWebauthnChallenge(db, { challenge: c.challenge, projectId, userId: c.ownerId, purpose: c.purpose, expiresAt: c.expiresAt }),
    takeChallenge: async (challenge, purpose, userId, now) => (await takeWebauthnChallenge(db, challenge, purpose, userId, now)) !== null,
  };
}
