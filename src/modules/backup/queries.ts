/**
 * SQL of project export and import. Export reads run in the operator's tenant snapshot (the
 * policies apply); import writes run in one owner transaction, every statement naming the
 * target project.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { Tx } from '../../db/pool.js';
import { SIZE } from '../data/queries.js';
import type { DocumentRecord, FileRecord, UserRecord } from './archive.js';

/** Serialises imports and collection creates of one project (the collections module's lock). */
export { lockProject } from '../collections/queries.js';

type Db = Kysely<Database>;

export const PAGE = 500;

export async function collections(tx: Tx, projectId: string) {
  return tx
    .selectFrom('collections')
    .select(['id', 'name', 'fields', 'rls', 'indexes', 'search_language', 'realtime', 'created_at'])
    .where('project_id', '=', projectId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Every document of a collection, soft-deleted ones included, by id after `after`. */
export async function documentsAfter(tx: Tx, projectId: string, collectionId: string, after: string) {
  const res = await sql<{ id: string; owner_id: string | null; data: Record<string, unknown>; created_at: Date; updated_at: Date; deleted_at: Date | null }>`
    SELECT id, owner_id, data, created_at, updated_at, deleted_at FROM documents
    WHERE project_id = ${projectId} AND collection_id = ${collectionId} AND id > ${after}
    ORDER BY id LIMIT ${PAGE}`.execute(tx);
  return res.rows;
}

export async function usersAfter(tx: Tx, projectId: string, after: string) {
  return tx
    .selectFrom('app_users')
    .select(['id', 'email', 'password_hash', 'email_verified', 'data', 'github_id', 'google_id', 'auth_providers', 'created_at', 'updated_at', 'disabled_at'])
    .where('project_id', '=', projectId)
    .where('id', '>', after)
    .orderBy('id')
    .limit(PAGE)
    .execute();
}

/** Confirmed files only: a pending upload is not a file yet. */
export async function filesAfter(tx: Tx, projectId: string, after: string) {
  return tx
    .selectFrom('files')
    .select(['id', 'path', 'owner_id', 'size', 'content_type', 'provider', 'created_at', 'confirmed_at'])
    .where('project_id', '=', projectId)
    .where('status', '=', 'confirmed')
    .where('id', '>', after)
    .orderBy('id')
    .limit(PAGE)
    .execute();
}

/** What the project already holds: an import goes only into an empty one. */
export async function contents(db: Db, projectId: string) {
  const res = await sql<{ collections: number; users: number; files: number }>`
    SELECT (SELECT count(*)::int FROM collections WHERE project_id = ${projectId}) AS collections,
           (SELECT count(*)::int FROM app_users WHERE project_id = ${projectId}) AS users,
           (SELECT count(*)::int FROM files WHERE project_id = ${projectId}) AS files`.execute(db);
  return res.rows[0]!;
}

/** End-user ids are unique across the deployment: those already taken (by any project). */
export async function takenUserIds(db: Db, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db.selectFrom('app_users').select('id').where('id', 'in', ids).execute();
  return rows.map((r) => r.id);
}

/** Inserts documents as they were (ids, owners, times); returns the bytes they are charged. */
export async function insertDocuments(db: Db, projectId: string, collectionId: string, docs: DocumentRecord[]): Promise<number> {
  if (!docs.length) return 0;
  const values = docs.map((d) => {
    const json = JSON.stringify(d.data);
    return sql`(${projectId}, ${collectionId}, ${d.id}, ${d.ownerId}, ${json}::jsonb, ${SIZE(json)}, ${d.createdAt}::timestamptz, ${d.updatedAt}::timestamptz, ${d.deletedAt}::timestamptz)`;
  });
  const res = await sql<{ bytes: number }>`
    WITH ins AS (
      INSERT INTO documents (project_id, collection_id, id, owner_id, data, size_bytes, created_at, updated_at, deleted_at)
      VALUES ${sql.join(values)} RETURNING size_bytes)
    SELECT coalesce(sum(size_bytes), 0)::bigint AS bytes FROM ins`.execute(db);
  return Number(res.rows[0]?.bytes ?? 0);
}

export async function insertUsers(db: Db, projectId: string, users: UserRecord[]): Promise<void> {
  if (!users.length) return;
  await db
    .insertInto('app_users')
    .values(users.map((u) => ({
      id: u.id, project_id: projectId, email: u.email, password_hash: u.passwordHash, email_verified: u.emailVerified,
      data: JSON.stringify(u.data) as unknown as Record<string, unknown>, github_id: u.githubId, google_id: u.googleId,
      auth_providers: u.authProviders, created_at: u.createdAt, updated_at: u.updatedAt, disabled_at: u.disabledAt ? new Date(u.disabledAt) : null,
    })))
    .execute();
}

/** File records under the target project's folder; returns their bytes. */
export async function insertFiles(db: Db, projectId: string, files: FileRecord[]): Promise<number> {
  if (!files.length) return 0;
  await db
    .insertInto('files')
    .values(files.map((f) => ({
      project_id: projectId, id: f.id, path: `${projectId}/${f.name}`, owner_id: f.ownerId, size: f.size,
      content_type: f.contentType, provider: f.provider, status: 'confirmed' as const,
      created_at: f.createdAt, confirmed_at: f.confirmedAt ?? f.createdAt,
    })))
    .execute();
  return files.reduce((n, f) => n + f.size, 0);
}

/** Ends the export's snapshot transaction when the client stops reading for this long. */
export async function setIdleTimeout(tx: Tx, ms: number): Promise<void> {
  await sql`SELECT set_config('idle_in_transaction_session_timeout', ${String(ms)}, true)`.execute(tx);
}
