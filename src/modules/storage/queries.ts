/** SQL of the storage domain. Tenant calls take the transaction of `ctx.db.tenant`. */
import { METRICS } from '../../lib/quota.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../../db/types.js';
import type { FilesTable, FileProvider } from './tables.js';

export type FileRow = Selectable<FilesTable>;
type Db = Kysely<Database>;

/** Upload requests of one tenant scope, project, owner and provider: inserted as one statement. */
export interface PendingBatch {
  projectId: string;
  ownerId: string | null;
  provider: FileProvider;
  /** Storage limit the project's confirmed usage plus a file must stay within; null: no check. */
  limit: number | null;
}

export interface PendingFile {
  id: string;
  path: string;
  size: number;
  contentType: string;
  createdAt: Date;
}

/**
 * Inserts pending files, each only if the project's confirmed usage plus its size stays within
 * the limit (the request-time check; the charge happens at confirm). Returns the ids inserted.
 */
export async function insertPending(db: Db, b: PendingBatch, files: PendingFile[]): Promise<Set<string>> {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO files (project_id, id, path, owner_id, size, content_type, provider, created_at)
    SELECT ${b.projectId}, f.id, f.path, ${b.ownerId}, f.size, f.content_type, ${b.provider}, f.created_at
    FROM unnest(${files.map((f) => f.id)}::text[], ${files.map((f) => f.path)}::text[], ${files.map((f) => f.size)}::bigint[],
      ${files.map((f) => f.contentType)}::text[], ${files.map((f) => f.createdAt)}::timestamptz[])
      AS f(id, path, size, content_type, created_at)
    WHERE ${b.limit}::bigint IS NULL OR coalesce((
      SELECT used FROM usage_counters
      WHERE subject_id = ${b.projectId} AND metric = ${METRICS.storageBytes} AND period = ''), 0) + f.size <= ${b.limit}::bigint
    RETURNING id`.execute(db);
  return new Set(rows.map((r) => r.id));
}

export async function findByPath(db: Db, projectId: string, path: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('project_id', '=', projectId).where('path', '=', path).executeTakeFirst();
}

/** Confirmations of one tenant scope, project and provider: one statement. */
export interface ConfirmBatch {
  projectId: string;
  provider: FileProvider;
  /** The guard's cap for the storage counter (see quotaCap). */
  cap: number;
}

/**
 * Charges and confirms pending uploads, each given by path and size, in one statement
 * (sql/55_storage_functions.sql). Per matched upload its row: confirmed, or still pending when
 * over the quota; uploads that matched nothing are absent.
 */
export async function confirmPending(db: Db, b: ConfirmBatch, files: Array<{ path: string; size: number }>, at: Date): Promise<FileRow[]> {
  const { rows } = await sql<FileRow>`
    SELECT * FROM plinth_confirm_uploads(${b.projectId}, ${files.map((f) => f.path)}::text[], ${files.map((f) => f.size)}::bigint[],
      ${b.provider}, ${METRICS.storageBytes}, ${b.cap}::bigint, ${at})`.execute(db);
  return rows;
}

export async function deleteByPath(db: Db, projectId: string, path: string): Promise<FileRow | undefined> {
  return db.deleteFrom('files').where('project_id', '=', projectId).where('path', '=', path).returningAll().executeTakeFirst();
}

export async function deletePending(db: Db, projectId: string, id: string): Promise<FileRow | undefined> {
  return db
    .deleteFrom('files')
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** Any project's file by path (admin connection): for the signed PUT and public serving. */
export async function fileByPath(db: Db, path: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('path', '=', path).executeTakeFirst();
}

/**
 * Pending uploads created in [from, to), oldest first (admin connection). The range keeps the
 * scan of files_created_idx to that window (from null: since the first upload).
 */
export async function pendingCreatedIn(db: Db, from: Date | null, to: Date, limit: number): Promise<FileRow[]> {
  let q = db.selectFrom('files').selectAll().where('status', '=', 'pending').where('created_at', '<', to);
  if (from) q = q.where('created_at', '>=', from);
  return q.orderBy('created_at').limit(limit).execute();
}

export async function listConfirmed(db: Db, projectId: string, limit: number, offset: number): Promise<FileRow[]> {
  return db
    .selectFrom('files')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('status', '=', 'confirmed')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countConfirmed(db: Db, projectId: string): Promise<number> {
  const { rows } = await sql<{ count: number }>`
    SELECT count(*)::int AS count FROM files WHERE project_id = ${projectId} AND status = 'confirmed'`.execute(db);
  return rows[0]?.count ?? 0;
}
