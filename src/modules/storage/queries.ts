/** SQL of the storage domain. Tenant calls take the transaction of `ctx.db.tenant`. */
import { METRICS, refund } from '../../lib/quota-queries.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import { jsonObjectFrom } from 'kysely/helpers/postgres';
import type { Database } from '../../database.js';
import type { Encrypted } from '../../lib/crypto.js';
import { PROJECT_WITH_OWNER } from '../projects/queries.js';
import type { FilesTable, FileProvider } from './tables.js';

type ProjectSecrets = { id: string; settings: Record<string, unknown>; secrets: Record<string, Encrypted> };

export type FileRow = Selectable<FilesTable>;
type Db = Kysely<Database>;

/** Upload requests of one tenant scope, project, owner and provider: inserted as one statement. */
export interface PendingBatch {
  projectId: string;
  ownerId: string | null;
  provider: FileProvider;
  /** The guard's cap for the storage counter (see quotaCap); null: not charged (a project's own bucket). */
  limit: number | null;
}

export interface PendingFile {
  id: string;
  path: string;
  size: number;
  contentType: string;
  createdAt: Date;
  /** The file's own privacy (null: the project's default). */
  private?: boolean | null;
}

/**
 * Inserts pending files, each only if the quota guard (plinth_reserve) charges its size to the
 * project's storage counter: a pending upload holds its bytes from the request on (the signed
 * PUT writes them to disk before any confirm), until it is deleted or swept. One statement, so
 * the charges and the rows commit together. Returns the ids inserted.
 */
export async function insertPending(db: Db, b: PendingBatch, files: PendingFile[]): Promise<Set<string>> {
  // CASE, not OR: SQL does not promise to skip the (charging) call when there is no limit.
  const { rows } = await sql<{ id: string }>`
    INSERT INTO files (project_id, id, path, owner_id, size, content_type, provider, created_at, private)
    SELECT ${b.projectId}, f.id, f.path, ${b.ownerId}, f.size, f.content_type, ${b.provider}, f.created_at, f.private
    FROM unnest(${files.map((f) => f.id)}::text[], ${files.map((f) => f.path)}::text[], ${files.map((f) => f.size)}::bigint[],
      ${files.map((f) => f.contentType)}::text[], ${files.map((f) => f.createdAt)}::timestamptz[], ${files.map((f) => f.private ?? null)}::boolean[])
      AS f(id, path, size, content_type, created_at, private)
    WHERE CASE WHEN ${b.limit}::bigint IS NULL THEN true
      ELSE plinth_reserve(${b.projectId}, ${METRICS.storageBytes}, '', f.size, ${b.limit}::bigint) IS NOT NULL END
    RETURNING id`.execute(db);
  return new Set(rows.map((r) => r.id));
}

export async function findByPath(db: Db, projectId: string, path: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('project_id', '=', projectId).where('path', '=', path).executeTakeFirst();
}

/** A file by its id (the key of a resumable upload's URL, resumable/ids.ts). */
export async function findById(db: Db, projectId: string, id: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

/** Confirmations of one tenant scope, project and provider: one statement. */
export interface ConfirmBatch {
  projectId: string;
  provider: FileProvider;
}

/**
 * Confirms pending uploads (already charged at request), each given by path and size, in one
 * statement (sql/55_storage_functions.sql). Per matched upload its confirmed row; uploads that
 * matched nothing are absent.
 */
export async function confirmPending(db: Db, b: ConfirmBatch, files: Array<{ path: string; size: number }>, at: Date): Promise<FileRow[]> {
  const { rows } = await sql<FileRow>`
    SELECT * FROM plinth_confirm_uploads(${b.projectId}, ${files.map((f) => f.path)}::text[], ${files.map((f) => f.size)}::bigint[],
      ${b.provider}, ${at})`.execute(db);
  return rows;
}

/** Gives back what a deleted file was charged (files on platform storage, pending or confirmed). */
async function refundRow(db: Db, row: FileRow | undefined): Promise<FileRow | undefined> {
  if (row?.provider === 'internal') await refund(db, { subjectId: row.project_id, metric: METRICS.storageBytes }, row.size);
  return row;
}

/** Deletes a file and refunds its charge: call inside a transaction. */
export async function deleteByPath(db: Db, projectId: string, path: string): Promise<FileRow | undefined> {
  return refundRow(db, await db.deleteFrom('files').where('project_id', '=', projectId).where('path', '=', path).returningAll().executeTakeFirst());
}

/** Deletes a still-pending upload and refunds its charge: call inside a transaction. */
export async function deletePending(db: Db, projectId: string, id: string): Promise<FileRow | undefined> {
  const row = await db
    .deleteFrom('files')
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
  return refundRow(db, row);
}

/** Any project's file by path (admin connection): for the signed PUT (serving: fileWithProjectByPath). */
export async function fileByPath(db: Db, path: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('path', '=', path).executeTakeFirst();
}

/**
 * Any project's file by path with its project and owner (PROJECT_WITH_OWNER), in ONE statement
 * (admin connection): public serving and rendering need both on every request. `project` is
 * null only if the project is gone.
 */
export async function fileWithProjectByPath(db: Db, path: string) {
  const found = await db
    .selectFrom('files as f')
    .selectAll('f')
    .select((eb) => jsonObjectFrom(
      eb.selectFrom('projects as p').innerJoin('operators as o', 'o.id', 'p.owner_id').select(PROJECT_WITH_OWNER).whereRef('p.id', '=', 'f.project_id'),
    ).as('project'))
    .where('f.path', '=', path)
    .executeTakeFirst();
  if (!found) return undefined;
  const { project, ...file } = found;
  return { file: file as FileRow, project };
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

/**
 * Saves (or, with null, removes) a project's own bucket: its settings in projects.settings.storage
 * and its encrypted secret key in projects.secrets, in one statement.
 */
export function saveBucket(db: Kysely<Database>, projectId: string, secretName: string, bucket: { settings: unknown; secret: Encrypted } | null, now: Date) {
  const update = bucket
    ? sql<ProjectSecrets>`
      UPDATE projects SET
        settings = settings || jsonb_build_object('storage', ${JSON.stringify(bucket.settings)}::jsonb),
        secrets = secrets || jsonb_build_object(${secretName}::text, ${JSON.stringify(bucket.secret)}::jsonb),
        updated_at = ${now}
      WHERE id = ${projectId} RETURNING id, settings, secrets`
    : sql<ProjectSecrets>`
      UPDATE projects SET settings = settings - 'storage', secrets = secrets - ${secretName}::text, updated_at = ${now}
      WHERE id = ${projectId} RETURNING id, settings, secrets`;
  return update.execute(db);
}

/** Sets one file's privacy (null: back to the project default); the row, or undefined. */
export async function setFilePrivate(db: Db, projectId: string, path: string, value: boolean | null): Promise<FileRow | undefined> {
  return db.updateTable('files').set({ private: value }).where('project_id', '=', projectId).where('path', '=', path).returningAll().executeTakeFirst();
}

/** Replaces the project's file rules (projects.settings.files). */
export async function saveFileSettings(db: Db, projectId: string, settings: unknown, now: Date) {
  const { rows } = await sql<ProjectSecrets>`
    UPDATE projects SET settings = settings || jsonb_build_object('files', ${JSON.stringify(settings)}::jsonb), updated_at = ${now}
    WHERE id = ${projectId} RETURNING id, settings, secrets`.execute(db);
  return rows[0];
}
