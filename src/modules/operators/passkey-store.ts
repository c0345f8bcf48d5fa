/** Operators' adapter of the shared WebAuthn ceremony (src/lib/identity/passkey-ceremony.ts), through the owner connection. */
import type { Kysely } from 'kysely';
import type { Database } from '../../database.js';
import { storedPasskeyOf as storedOf, type PasskeyStore } from '../../lib/identity/passkey-ceremony.js';
import {
  findOperatorPasskeyByCredential, insertOperatorWebauthnChallenge, listOperatorPasskeys, recordOperatorPasskeyUse, takeOperatorWebauthnChallenge,
} from './passkey-queries.js';

export function operatorPasskeyStore(db: Kysely<Database>): PasskeyStore {
  return {
    list: async (operatorId) => (await listOperatorPasskeys(db, operatorId)).map((p) => storedOf(p)),
    findByCredential: async (credentialId) => {
      const row = await findOperatorPasskeyByCredential(db, credentialId);
      return row && { ...storedOf(row), id: row.id, ownerId: row.operator_id };
    },
    recordUse: (id, counter, backedUp, now) => recordOperatorPasskeyUse(db, id, counter, backedUp, now),
    insertChallenge: (c) => insertOperatorWebauthnChallenge(db, { challenge: c.challenge, operatorId: c.ownerId, purpose: c.purpose, expiresAt: c.expiresAt }),
    takeChallenge: (challenge, purpose, operatorId, now) => takeOperatorWebauthnChallenge(db, challenge, purpose, operatorId, now),
  };
}
