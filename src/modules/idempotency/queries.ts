/** Every SQL statement of the idempotency domain. */
import type { Kysely } from 'kysely';
import type { Database } from '../../database.js';

type Db = Kysely<Database>;

/**
 * Takes the key for this request: inserts its row, or takes over an expired one or an abandoned
 * claim (committed ahead, unanswered past `abandonedAt`). Returns false
 * when a live row holds the key. A row another transaction inserted and has not committed yet
 * makes this wait for that transaction (the primary key), so two requests with one key never
 * both write: the second sees the first's row once it commits, or takes the key if it rolls back.
 */
export async function claimKey(db: Db, projectId: string, key: string, fingerprint: string, now: Date, expiredAt: Date, abandonedAt: Date): Promise<boolean> {
  const row = await db
    .insertInto('idempotency_keys')
    .values({ project_id: projectId, key, fingerprint, status: null, response: null, created_at: now })
    .onConflict((oc) =>
      oc
        .columns(['project_id', 'key'])
        .doUpdateSet((eb) => ({
          fingerprint: eb.ref('excluded.fingerprint'),
          status: null,
          response: null,
          created_at: eb.ref('excluded.created_at'),
        }))
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.created_at', '<=', expiredAt),
            // a claim committed ahead of a call and never settled (its process died): abandoned
            eb.and([eb('idempotency_keys.status', 'is', null), eb('idempotency_keys.created_at', '<=', abandonedAt)]),
          ]),
        ),
    )
    .returning('key')
    .executeTakeFirst();
  return row !== undefined;
}

export function storedKey(db: Db, projectId: string, key: string) {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status', 'response'])
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/**
 * Stores the answer on the key. `claimedAt`: a claim committed ahead (send-batch) stores it only
 * while the claim is still its own: unanswered and claimed at that time, not taken over since.
 */
export async function saveAnswer(db: Db, projectId: string, key: string, status: number, response: string, claimedAt?: Date): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ status, response })
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .$if(claimedAt !== undefined, (qb) => qb.where('status', 'is', null).where('created_at', '=', claimedAt!))
    .execute();
}

/**
 * Gives up a claim whose write did not happen (send-batch: the provider refused the call), if it
 * is still the claim made at `claimedAt`: one a retry took over after its lease is the retry's.
 */
export async function releaseKey(db: Db, projectId: string, key: string, claimedAt: Date): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .where('status', 'is', null)
    .where('created_at', '=', claimedAt)
    .execute();
}

export async function deleteExpiredKeys(db: Db, expiredAt: Date): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('created_at', '<=', expiredAt).execute();
}
