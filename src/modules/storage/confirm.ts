/**
 * upload-confirm (docs/wire-compatibility.md §6.3): verify the object, mark it confirmed (its bytes were charged
 * to the quota when the upload was requested).
 *
 * The common case costs one object stat and one statement: the object is looked up on the
 * backend new uploads go to, and one statement (shared with concurrent confirms: batching.ts)
 * locks and confirms the pending row only if its path, size and provider all match.
 * Anything else (never requested, already confirmed, a size mismatch, a file on a bucket the
 * project has since left, a current backend that cannot be used) falls back to reading the row
 * first, which decides the answer.
 */
import type { AppContext } from '../../context.js';
import { backendFor, backendOfFile, storeCall } from './backends.js';
import { confirmPendingFile } from './batching.js';
import type { ObjectInfo } from './drivers/types.js';
import { GENERIC_NO_URL_WARNING } from './drivers/types.js';
import { StorageErrors } from './errors.js';
import { fileSettingsOf, isPrivate } from './file-settings.js';
import { bytesAllowed } from './upload-rules.js';
import { checkPath } from './paths.js';
import { deletePending, findByPath, type FileRow } from './queries.js';
import { isSize, scopeOf, type Caller } from './service.js';
import type { FileProvider } from './tables.js';

const PRIVATE_WARNING = 'Upload confirmed. This file is private: get a signed URL from POST /api/storage/download-url to read it.';

function confirmedView(ctx: AppContext, caller: Caller, row: FileRow) {
  if (isPrivate(caller.project, row)) return { path: row.path, url: null, provider: row.provider, warning: PRIVATE_WARNING };
  const driver = backendOfFile(ctx, caller.project, row.provider);
  const url = driver?.publicUrl(row.path) ?? null;
  const base = { path: row.path, url, provider: row.provider };
  return url ? base : { ...base, warning: driver?.noPublicUrlWarning ?? GENERIC_NO_URL_WARNING };
}


/** Best-effort removal of a rejected upload (object and pending row); failures only logged. */
async function discard(ctx: AppContext, caller: Caller, row: FileRow): Promise<void> {
  try {
    await backendOfFile(ctx, caller.project, row.provider)?.remove([row.path]);
    await ctx.db.tenant(scopeOf(caller), (tx) => deletePending(tx, row.project_id, row.id));
  } catch (err) {
    ctx.log.warn({ err, path: row.path }, 'storage: could not discard a rejected upload');
  }
}

/** One statement (shared with concurrent confirms); undefined when no pending upload matched. */
async function tryConfirm(ctx: AppContext, caller: Caller, path: string, size: number, provider: FileProvider) {
  const batch = { projectId: caller.project.id, provider };
  const row = await confirmPendingFile(ctx, { scope: scopeOf(caller), batch }, { path, size });
  return row && confirmedView(ctx, caller, row);
}

/** What the fast path found on the backend new uploads go to (null: that backend is unusable). */
type Seen = { info: ObjectInfo | null; provider: FileProvider } | null;

/** The path taken when the one-statement confirm did not match: the stored row decides. */
async function confirmByRow(ctx: AppContext, caller: Caller, path: string, size: number, seen: Seen) {
  const row = await ctx.db.read(scopeOf(caller), (db) => findByPath(db, caller.project.id, path));
  if (!row) throw StorageErrors.file_not_found('Upload not found. Request an upload URL first.');
  if (row.status === 'confirmed') return confirmedView(ctx, caller, row);
  const driver = backendOfFile(ctx, caller.project, row.provider);
  if (!driver) throw StorageErrors.storage_failed('The bucket this file was uploaded to is no longer configured.');
  // Not asked twice when the fast path already looked on this backend (clients retry 409s).
  const info = seen?.provider === row.provider ? seen.info : await storeCall(ctx, 'head', { path }, () => driver.head(path));
  if (!info) throw StorageErrors.upload_not_ready();
  if (info.size !== row.size) {
    await discard(ctx, caller, row);
    throw StorageErrors.size_mismatch();
  }
  if (size !== info.size) throw StorageErrors.size_mismatch();
  const confirmed = await tryConfirm(ctx, caller, path, size, row.provider);
  if (confirmed) return confirmed;
  // Changed since it was read: confirmed by a concurrent call, or deleted.
  const current = await ctx.db.read(scopeOf(caller), (db) => findByPath(db, caller.project.id, path));
  if (current?.status !== 'confirmed') throw StorageErrors.file_not_found();
  return confirmedView(ctx, caller, current);
}

/**
 * The fast path's guess: the object on the backend new uploads go to. If that backend cannot
 * be used (unreadable credentials, unreachable bucket) the upload may still be on the other
 * one, so the stored row decides instead of this failing the confirm.
 */
async function lookOnCurrentBackend(ctx: AppContext, caller: Caller, path: string): Promise<Seen> {
  try {
    const { driver, provider } = backendFor(ctx, caller.project);
    return { info: await driver.head(path), provider };
  } catch (err) {
    ctx.log.debug({ err, path }, 'storage confirm: current backend unusable, reading the row');
    return null;
  }
}

/** Where the project restricts types: the bytes of a pending upload, by their magic numbers. */
async function checkStoredType(ctx: AppContext, caller: Caller, path: string): Promise<void> {
  const row = await ctx.db.read(scopeOf(caller), (db) => findByPath(db, caller.project.id, path));
  if (row?.status !== 'pending' || (await bytesAllowed(ctx, caller.project, row))) return;
  await discard(ctx, caller, row);
  throw StorageErrors.file_type_not_allowed();
}

export async function confirmUpload(ctx: AppContext, caller: Caller, input: { filePath?: unknown; size?: unknown }) {
  if (typeof input.filePath !== 'string' || !input.filePath || !isSize(input.size)) throw StorageErrors.upload_confirm_invalid();
  const { path } = checkPath(caller.project.id, input.filePath);
  if (fileSettingsOf(caller.project).allowedTypes) await checkStoredType(ctx, caller, path);
  const seen = await lookOnCurrentBackend(ctx, caller, path);
  const confirmed = seen?.info?.size === input.size ? await tryConfirm(ctx, caller, path, input.size, seen.provider) : undefined;
  return confirmed ?? confirmByRow(ctx, caller, path, input.size, seen);
}
