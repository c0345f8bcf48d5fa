/**
 * SQL of resumable uploads (migrations/033_resumable_uploads.sql), on the admin connection:
 * these rows are the platform's bookkeeping of @tus/server, reached only through the
 * authenticated tus routes (which check the caller against the `files` row first).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../database.js';

type Db = Kysely<Database>;

export async function sessionValue(db: Db, id: string): Promise<unknown> {
  const row = await db.selectFrom('upload_sessions').select('value').where('id', '=', id).executeTakeFirst();
  return row?.value;
}

export async function saveSession(db: Db, id: string, projectId: string, value: unknown): Promise<void> {
  await db
    .insertInto('upload_sessions')
    .values({ id, project_id: projectId, value: JSON.stringify(value) })
    .onConflict((oc) => oc.column('id').doUpdateSet({ value: JSON.stringify(value) }))
    .execute();
}

export async function deleteSession(db: Db, id: string): Promise<boolean> {
  const r = await db.deleteFrom('upload_sessions').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function sessionIds(db: Db): Promise<string[]> {
  return (await db.selectFrom('upload_sessions').select('id').execute()).map((r) => r.id);
}

export async function hasSession(db: Db, id: string): Promise<boolean> {
  return !!(await db.selectFrom('upload_sessions').select('id').where('id', '=', id).executeTakeFirst());
}

/**
 * Takes the lease of an upload when it is free or its holder's lease ran out: true when
 * `holder` now holds it for `ttlMs`. Autocommit: no transaction is held across a PATCH.
 */
export async function takeLease(db: Db, id: string, holder: string, ttlMs: number): Promise<boolean> {
  const { rows } = await sql<{ holder: string }>`
    INSERT INTO upload_locks (id, holder, expires_at) VALUES (${id}, ${holder}, now() + ${ttlMs} * interval '1 millisecond')
    ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, release_requested = false
      WHERE upload_locks.expires_at < now()
    RETURNING holder`.execute(db);
  return rows.length > 0;
}

/** Asks whoever holds the lease to let go (its renewal sees the flag and ends its request). */
export async function askRelease(db: Db, id: string): Promise<void> {
  await db.updateTable('upload_locks').set({ release_requested: true }).where('id', '=', id).execute();
}

/** Extends a held lease; null when it is no longer ours, else whether another request wants it. */
export async function renewLease(db: Db, id: string, holder: string, ttlMs: number): Promise<boolean | null> {
  const { rows } = await sql<{ release_requested: boolean }>`
    UPDATE upload_locks SET expires_at = now() + ${ttlMs} * interval '1 millisecond'
    WHERE id = ${id} AND holder = ${holder} RETURNING release_requested`.execute(db);
  return rows[0] ? rows[0].release_requested : null;
}

export async function dropLease(db: Db, id: string, holder: string): Promise<void> {
  await db.deleteFrom('upload_locks').where('id', '=', id).where('holder', '=', holder).execute();
}
