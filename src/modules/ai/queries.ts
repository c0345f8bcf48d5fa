/** SQL of the AI domain: the account key (operators.ai_key) and the key owner (the project key: projects/queries.ts). */
import type { Kysely } from 'kysely';
import type { Encrypted } from '../../lib/crypto.js';
import type { Database } from '../../database.js';

type Db = Kysely<Database>;

/** Stores (or clears, with null) the operator's encrypted account key. */
export function updateAccountKey(db: Db, operatorId: string, sealed: Encrypted | null, now: Date) {
  const value = sealed === null ? null : JSON.stringify(sealed);
  return db
    .updateTable('operators')
    .set({ ai_key: value as never, updated_at: now as never })
    .where('id', '=', operatorId)
    .execute();
}

export function findKeyOwner(db: Db, ownerId: string) {
  return db.selectFrom('operators').select(['id', 'plan', 'ai_key']).where('id', '=', ownerId).executeTakeFirstOrThrow();
}
