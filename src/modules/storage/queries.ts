/** SQL of the storage domain. Tenant calls take the transaction of `ctx.db.tenant`. */
import { METRICS } from '../../lib/quota.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../../db/types.js';
import type { FilesTable, FileProvider } from './tables.js';

export type FileRow = Selectable<FilesTable>;
type Db = Kysely<Database>;

export interface NewFile {
  projectId: string;
  id: string;
  path: string;
  ownerId: string | null;
  size: number;
  contentType: string;
  provider: FileProvider;
  createdAt: Date;
}

/**
 * Inserts a pending file only if the project's confirmed usage plus its size stays within
 * `limit` (null: no check, e.g. the project's own bucket). One statement; false when over.
 */
export async function insertPendingWithin(db: Db, f: NewFile, limit: number | null): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO files (project_id, id, path, owner_id, size, content_type, provider, created_at)
    SELECT ${f.projectId}, ${f.id}, ${f.path}, ${f.ownerId}, ${f.size}, ${f.contentType}, ${f.provider}, ${f.createdAt}
    WHERE ${limit}::bigint IS NULL OR coalesce((
      SELECT used FROM usage_counters
      WHERE subject_id = ${f.projectId} AND metric = ${METRICS.storageBytes} AND period = ''), 0) + ${f.size} <= ${limit}::bigint
    RETURNING id`.execute(db);
  return rows.length === 1;
}

export async function findByPath(db: Db, projectId: string, path: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('project_id', '=', projectId).where('path', '=', path).executeTakeFirst();
}

/** Marks a pending file confirmed (row-locked); undefined when it was not pending any more. */
export async function markConfirmed(db: Db, projectId: string, id: string, size: number, at: Date): Promise<FileRow | undefined> {
  return db
    .updateTable('files')
    .set({ status: 'confirmed', size, confirmed_at: at })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
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

/** Pending uploads created before `before`, oldest first (admin connection). */
export async function stalePending(db: Db, before: Date, limit: number): Promise<FileRow[]> {
  return db
    .selectFrom('files')
    .selectAll()
    .where('status', '=', 'pending')
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute();
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
