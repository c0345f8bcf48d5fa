/**
 * SQL of project export and import. Export reads run in the operator's tenant snapshot (the
 * policies apply); import writes run in one owner transaction, every statement naming the
 * target project.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { Tx } from '../../db/pool.js';
import type { DocumentRecord, FileRecord, UserRecord } from './archive.js';

/** Serialises imports and collection creates of one project (the collections module's lock). */
export { lockProject } from '../collections/queries.js';

type Db = Kysely<Database>;

export const PAGE = 500;

export async function collections(tx: Tx, projectId: string) {
  return tx
    .selectFrom('collections')
    .select(['id', 'name', 'fields', 'rls', 'indexes', 'search_language', 'realtime', 'rules', 'created_at'])
    .where('project_id', '=', projectId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** A document's fields with its hidden ones (docs/rules.md, "Field protection"; kept outside `data`). */
const WHOLE_DATA = sql.raw(`data || coalesce(private, '{}') || coalesce(secret, '{}') AS data`);

/** Every document of a collection, soft-deleted ones included, by id after `after`. */
export async function documentsAfter(tx: Tx, projectId: string, collectionId: string, after: string) {
  const res = await sql<{ id: string; owner_id: string | null; data: Record<string, unknown>; created_at: Date; updated_at: Date; deleted_at: Date | null }>`
    SELECT id, owner_id, ${WHOLE_DATA}, created_at, updated_at, deleted_at FROM documents
    WHERE project_id = ${projectId} AND collection_id = ${collectionId} AND id > ${after}
    ORDER BY id LIMIT ${PAGE}`.execute(tx);
  return res.rows;
}

export async function usersAfter(tx: Tx, projectId: string, after: string) {
  return tx
    .selectFrom('app_users')
    .select(['id', 'email', 'password_hash', 'email_verified', 'data', 'github_id', 'google_id', 'auth_providers', 'created_at', 'updated_at', 'disabled_at', 'is_anonymous'])
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

/**
 * Inserts documents as they were (ids, owners, times); returns the bytes they are charged. Each
 * document's JSON is sent once (its size is taken from the stored value, as SIZE does).
 */
export async function insertDocuments(db: Db, projectId: string, collectionId: string, docs: DocumentRecord[]): Promise<number> {
  if (!docs.length) return 0;
  const values = docs.map((d) => sql`(${d.id}, ${d.ownerId}, ${JSON.stringify(d.data)}::jsonb, ${d.createdAt}::timestamptz, ${d.updatedAt}::timestamptz, ${d.deletedAt}::timestamptz)`);
  const res = await sql<{ bytes: number }>`
    WITH ins AS (
      INSERT INTO documents (project_id, collection_id, id, owner_id, data, size_bytes, created_at, updated_at, deleted_at)
      SELECT ${projectId}, ${collectionId}, v.id, v.owner_id, v.data, octet_length(v.data::text), v.created_at, v.updated_at, v.deleted_at
        FROM (VALUES ${sql.join(values)}) AS v (id, owner_id, data, created_at, updated_at, deleted_at)
      RETURNING size_bytes)
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
      is_anonymous: u.isAnonymous === true,
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

/** Advisory-lock space of imports (two-key form: apart from every one-key lock of the code). */
const IMPORT_LOCK_SPACE = 0x504c4e49;

/**
 * At most one import per operator at a time, across every node: a lock held until the
 * import's transaction ends (commit, rollback, or the connection dropped). False: one runs.
 */
export async function tryLockOperatorImport(db: Db, operatorId: string): Promise<boolean> {
  const res = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${IMPORT_LOCK_SPACE}, hashtext(${operatorId})) AS locked`.execute(db);
  return res.rows[0]!.locked;
}

/** A copy with new ids (new-ids.ts): the archive's ids and their new ids, for this transaction. */
export async function createArchivedIds(db: Db): Promise<void> {
  await sql`CREATE TEMP TABLE backup_archived_ids (id text PRIMARY KEY, new_id text NOT NULL) ON COMMIT DROP`.execute(db);
}

export async function addArchivedIds(db: Db, pairs: Array<[string, string]>): Promise<void> {
  if (!pairs.length) return;
  await sql`INSERT INTO backup_archived_ids (id, new_id)
            SELECT * FROM unnest(${pairs.map((p) => p[0])}::text[], ${pairs.map((p) => p[1])}::text[])
            ON CONFLICT DO NOTHING`.execute(db);
}

/** Which of these strings are ids the archive holds. */
export async function archivedAmong(db: Db, candidates: string[]): Promise<Set<string>> {
  if (!candidates.length) return new Set();
  const res = await sql<{ id: string }>`SELECT id FROM backup_archived_ids WHERE id = ANY(${candidates}::text[])`.execute(db);
  return new Set(res.rows.map((r) => r.id));
}

export async function importedDocumentsAfter(db: Db, projectId: string, collectionId: string, after: string) {
  const res = await sql<{ id: string; owner_id: string | null; data: Record<string, unknown> }>`
    SELECT id, owner_id, ${WHOLE_DATA} FROM documents
    WHERE project_id = ${projectId} AND collection_id = ${collectionId} AND id > ${after}
    ORDER BY id LIMIT ${PAGE}`.execute(db);
  return res.rows;
}

/** Owner ids and data with the new ids; same lengths, so the charged sizes do not change. */
export async function rewriteDocuments(db: Db, projectId: string, collectionId: string, rows: Array<{ id: string; ownerId: string | null; json: string }>): Promise<void> {
  if (!rows.length) return;
  const values = rows.map((r) => sql`(${r.id}, ${r.ownerId}, ${r.json})`);
  await sql`
    UPDATE documents d SET owner_id = v.owner_id, data = v.data::jsonb
      FROM (VALUES ${sql.join(values)}) AS v (id, owner_id, data)
     WHERE d.project_id = ${projectId} AND d.collection_id = ${collectionId} AND d.id = v.id`.execute(db);
}

export async function importedUsersAfter(db: Db, projectId: string, after: string) {
  return db.selectFrom('app_users').select(['id', 'data']).where('project_id', '=', projectId).where('id', '>', after).orderBy('id').limit(PAGE).execute();
}

export async function rewriteUserData(db: Db, projectId: string, id: string, json: string): Promise<void> {
  await sql`UPDATE app_users SET data = ${json}::jsonb WHERE project_id = ${projectId} AND id = ${id}`.execute(db);
}

/** Files' owners: the new id of each archived owner. */
export async function rewriteFileOwners(db: Db, projectId: string): Promise<void> {
  await sql`UPDATE files f SET owner_id = a.new_id FROM backup_archived_ids a WHERE f.project_id = ${projectId} AND f.owner_id = a.id`.execute(db);
}
