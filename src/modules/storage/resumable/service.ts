/**
 * Resumable uploads (tus) as the storage domain sees them, knowing no HTTP: the hooks
 * @tus/server calls. A tus upload is a `files` row like an upload-request's:
 * - created (POST) → `createUpload`: the declared Upload-Length is charged to the quota by the
 *   same guarded statement as upload-request (batching.ts → plinth_reserve), and the row is
 *   pending; deferred length is refused (nothing to charge);
 * - each HEAD/PATCH/DELETE → `resolveUpload`: the URL's upload id (ids.ts) names the row, and
 *   only the caller that may see it (its project's secret key, or the owning user: RLS and the
 *   owner check) reaches the bytes;
 * - finished → `finishUpload`: confirmed by the same statement as upload-confirm;
 * - never finished → the 24 h sweep removes bytes, session and row and refunds (sweep.ts).
 */
import type { AppContext } from '../../../context.js';
import { objectId } from '../../../lib/ids.js';
import { quotaCap } from '../../../lib/quota-queries.js';
import { backendFor } from '../backends.js';
import { confirmPendingFile, insertPendingFile } from '../batching.js';
import { StorageErrors } from '../errors.js';
import { fileSettingsOf } from '../file-settings.js';
import { buildPath, checkPath, hasControlChars } from '../paths.js';
import { findById, findByPath, type FileRow } from '../queries.js';
import { deleteFile, scopeOf, type Caller } from '../service.js';
import { bytesAllowed, checkDeclared } from '../upload-rules.js';
import { ensureSweep } from '../sweep.js';
import { parseUploadId } from './ids.js';

type Metadata = Record<string, string | null> | undefined;

const text = (v: string | null | undefined, max: number): string | null => {
  if (v === undefined || v === null) return null;
  if (v.trim() === '' || v.length > max || hasControlChars(v)) throw StorageErrors.upload_metadata_invalid();
  return v.trim();
};

/** The largest file a resumable upload of this project may declare (plan limit, configurable). */
export function resumableLimit(ctx: AppContext, caller: Caller): number {
  const { free, pro } = ctx.config.storage.resumable.maxFileBytes;
  return caller.project.planName === 'pro' ? pro : free;
}

/** Resumable uploads go to platform storage only (a project's own bucket has no tus store here). */
function requirePlatform(ctx: AppContext, caller: Caller): void {
  if (backendFor(ctx, caller.project).provider !== 'internal') throw StorageErrors.resumable_unavailable();
}

/**
 * The upload's path (tus's key for it), built like upload-request's from the client's file
 * name, which the upload's metadata keeps as sent. Its URL names it by id (ids.ts).
 */
export function newUploadPath(ctx: AppContext, caller: Caller, metadata: Metadata): string {
  const filename = text(metadata?.filename ?? metadata?.name, 1024) ?? 'file';
  return buildPath(caller.project.id, objectId(ctx.clock.now().getTime()), filename);
}

export const declaredType = (metadata: Metadata): string => text(metadata?.filetype ?? metadata?.contentType, 255) ?? 'application/octet-stream';

/** Charges the declared size and inserts the pending row; refused uploads leave nothing. */
export async function createUpload(ctx: AppContext, caller: Caller, input: { path: string; size: number | undefined; metadata: Metadata }) {
  const { size, path } = input;
  if (size === undefined || !Number.isSafeInteger(size)) throw StorageErrors.upload_length_required();
  if (size <= 0) throw StorageErrors.upload_length_required('Upload-Length must be at least 1 byte.');
  requirePlatform(ctx, caller);
  if (size > resumableLimit(ctx, caller)) throw StorageErrors.file_too_large();
  const contentType = declaredType(input.metadata);
  const { project } = caller;
  checkDeclared(project, contentType, size);
  const now = ctx.clock.now();
  // The sweep first: a crash in between never leaves an unswept row (as upload-request).
  await ensureSweep(ctx, now);
  const batch = { projectId: project.id, ownerId: caller.userId, provider: 'internal' as const, limit: quotaCap(project.plan.storageBytes) };
  const id = checkPath(project.id, path).fileId;
  const flag = input.metadata?.private;
  const file = { id, path, size, contentType, createdAt: now, private: flag === 'true' ? true : flag === 'false' ? false : null };
  const inserted = await insertPendingFile(ctx, { scope: scopeOf(caller), batch }, file);
  if (!inserted) throw StorageErrors.storage_limit_exceeded();
}

/** The caller's own upload (pending or finished), or 404: another user's or project's is unseen. */
export async function checkAccess(ctx: AppContext, caller: Caller, path: string): Promise<FileRow> {
  checkPath(caller.project.id, path);
  const row = await ctx.db.read(scopeOf(caller), (db) => findByPath(db, caller.project.id, path));
  if (!row || (caller.keyKind === 'publishable' && row.owner_id !== caller.userId)) throw StorageErrors.file_not_found();
  return row;
}

/**
 * The upload an id of a tus URL names, as this caller sees it: another project's id is 403 (as
 * another project's path everywhere), an id never issued, or another user's upload, 404.
 */
export async function resolveUpload(ctx: AppContext, caller: Caller, segment: string | undefined): Promise<FileRow> {
  const ref = parseUploadId(segment);
  if (!ref) throw StorageErrors.file_not_found();
  if ('path' in ref) return checkAccess(ctx, caller, ref.path);
  if (ref.projectId !== caller.project.id) throw StorageErrors.access_denied();
  const row = await ctx.db.read(scopeOf(caller), (db) => findById(db, caller.project.id, ref.fileId));
  if (!row || (caller.keyKind === 'publishable' && row.owner_id !== caller.userId)) throw StorageErrors.file_not_found();
  return row;
}

/** All bytes arrived: the pending row becomes a normal confirmed file. */
export async function finishUpload(ctx: AppContext, caller: Caller, path: string, size: number): Promise<FileRow> {
  const batch = { projectId: caller.project.id, provider: 'internal' as const };
  if (fileSettingsOf(caller.project).allowedTypes) {
    const pending = await checkAccess(ctx, caller, path);
    if (pending.status === 'pending' && !(await bytesAllowed(ctx, caller.project, pending))) {
      await deleteFile(ctx, caller, { path });
      throw StorageErrors.file_type_not_allowed();
    }
  }
  const row = await confirmPendingFile(ctx, { scope: scopeOf(caller), batch }, { path, size });
  if (row) return row;
  const current = await checkAccess(ctx, caller, path);
  if (current.status !== 'confirmed') throw StorageErrors.size_mismatch();
  return current;
}
