/**
 * The upload flow and deletion (contract §6), knowing no HTTP. Quota: checked against the
 * headroom at request time, charged at confirm with a guarded `reserve` in the same
 * transaction that marks the file confirmed, refunded in the transaction that deletes it.
 */
import type { AppContext } from '../../context.js';
import type { TenantScope, Tx } from '../../db/pool.js';
import { objectId } from '../../lib/ids.js';
import { METRICS, refund, refundAhead, reserveAhead } from '../../lib/quota.js';
import type { ProjectRecord } from '../projects/cache.js';
import { backendFor, backendOfFile } from './backends.js';
import { GENERIC_NO_URL_WARNING } from './drivers/types.js';
import { StorageErrors } from './errors.js';
import { buildPath, checkPath, hasControlChars } from './paths.js';
import { deleteByPath, deletePending, findByPath, insertPendingWithin, markConfirmed, type FileRow } from './queries.js';
import { SIGNED_URL_TTL_SECONDS } from './signing.js';
import { ensureSweep } from './sweep.js';

export interface Caller {
  project: ProjectRecord;
  keyKind: 'secret' | 'publishable';
  /** The signed-in end user (publishable-key callers); null for the secret key. */
  userId: string | null;
}

export const storageCounter = (projectId: string) => ({ subjectId: projectId, metric: METRICS.storageBytes });

const scopeOf = (c: Caller): TenantScope => ({ projectId: c.project.id, userId: c.userId, keyKind: c.keyKind });

const isSize = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const isText = (v: unknown, max: number): v is string =>
  typeof v === 'string' && v.trim() !== '' && v.length <= max && !hasControlChars(v);

interface UploadRequestInput {
  filename?: unknown;
  contentType?: unknown;
  size?: unknown;
}

export async function requestUpload(ctx: AppContext, caller: Caller, input: UploadRequestInput) {
  const { filename, contentType, size } = input;
  if (!isText(filename, 1024) || !isText(contentType, 255) || !isSize(size)) throw StorageErrors.upload_request_invalid();
  const { project } = caller;
  if (size > project.plan.maxFileBytes) throw StorageErrors.file_too_large();
  const now = ctx.clock.now();
  const { driver, provider } = backendFor(ctx, project);
  const id = objectId(now.getTime());
  const path = buildPath(project.id, id, filename);
  const expiresAt = new Date(now.getTime() + SIGNED_URL_TTL_SECONDS * 1000);
  const signedUrl = await driver
    .presignPut({ path, size, contentType: contentType.trim(), signedAt: now, expiresAt })
    .catch((err) => {
      ctx.log.error({ err, projectId: project.id }, 'storage presign failed');
      throw StorageErrors.storage_unavailable('Could not generate upload URL');
    });
  // The cleanup sweep is scheduled first: a crash in between never leaves an unswept row.
  await ensureSweep(ctx, now);
  const file = { projectId: project.id, id, path, ownerId: caller.userId, size, contentType: contentType.trim(), provider, createdAt: now };
  const limit = provider === 'internal' ? project.plan.storageBytes : null;
  const inserted = await ctx.db.read(scopeOf(caller), (db) => insertPendingWithin(db, file, limit));
  if (!inserted) throw StorageErrors.storage_limit_exceeded();
  return { signedUrl, filePath: path, expiresAt: expiresAt.toISOString() };
}

function confirmedView(ctx: AppContext, caller: Caller, row: FileRow) {
  const driver = backendOfFile(ctx, caller.project, row.provider);
  const url = driver?.publicUrl(row.path) ?? null;
  const base = { path: row.path, url, provider: row.provider };
  return url ? base : { ...base, warning: driver?.noPublicUrlWarning ?? GENERIC_NO_URL_WARNING };
}

/** Best-effort removal of a rejected upload (object and pending row); failures only logged. */
async function discard(ctx: AppContext, caller: Caller, row: FileRow): Promise<void> {
  try {
    await backendOfFile(ctx, caller.project, row.provider)?.remove([row.path]);
    await ctx.db.read(scopeOf(caller), (db) => deletePending(db, row.project_id, row.id));
  } catch (err) {
    ctx.log.warn({ err, path: row.path }, 'storage: could not discard a rejected upload');
  }
}

export async function confirmUpload(ctx: AppContext, caller: Caller, input: { filePath?: unknown; size?: unknown }) {
  if (typeof input.filePath !== 'string' || !input.filePath || !isSize(input.size)) throw StorageErrors.upload_confirm_invalid();
  const { path } = checkPath(caller.project.id, input.filePath);
  const row = await ctx.db.read(scopeOf(caller), (db) => findByPath(db, caller.project.id, path));
  if (!row) throw StorageErrors.file_not_found('Upload not found. Request an upload URL first.');
  if (row.status === 'confirmed') return confirmedView(ctx, caller, row);
  const driver = backendOfFile(ctx, caller.project, row.provider);
  if (!driver) throw StorageErrors.storage_unavailable('The bucket this file was uploaded to is no longer configured.');
  const info = await driver.head(path).catch((err) => {
    ctx.log.error({ err, path }, 'storage head failed');
    throw StorageErrors.storage_unavailable();
  });
  if (!info) throw StorageErrors.upload_not_ready();
  if (info.size !== row.size) {
    await discard(ctx, caller, row);
    throw StorageErrors.size_mismatch();
  }
  if (input.size !== info.size) throw StorageErrors.size_mismatch();
  const confirmed = await ctx.db.read(scopeOf(caller), (db) => chargeAndConfirm(ctx, db, caller, row, info.size));
  if (!confirmed) {
    await discard(ctx, caller, row);
    throw StorageErrors.storage_limit_exceeded();
  }
  return confirmedView(ctx, caller, confirmed);
}

/**
 * Charges the file's bytes (a guarded reservation committed ahead, so the project's counter
 * row is never held through a disk sync), then marks the file confirmed. A concurrent confirm
 * that already won gets its charge back: a file is charged once. Null when over the quota.
 */
async function chargeAndConfirm(ctx: AppContext, db: Tx, caller: Caller, row: FileRow, size: number): Promise<FileRow | null> {
  const counter = storageCounter(row.project_id);
  const charged = row.provider === 'internal';
  if (charged && (await reserveAhead(db, counter, size, caller.project.plan.storageBytes)) === null) return null;
  let updated: FileRow | undefined;
  try {
    updated = await markConfirmed(db, row.project_id, row.id, size, ctx.clock.now());
  } catch (err) {
    if (charged) await refundAhead(db, counter, size);
    throw err;
  }
  if (updated) return updated;
  if (charged) await refundAhead(db, counter, size); // a concurrent confirm won and paid
  const current = await findByPath(db, row.project_id, row.path);
  if (!current) throw StorageErrors.file_not_found();
  return current;
}

export async function deleteFile(ctx: AppContext, caller: Caller, input: { path?: unknown }): Promise<void> {
  if (typeof input.path !== 'string' || !input.path) throw StorageErrors.file_path_required();
  const { path } = checkPath(caller.project.id, input.path);
  await ctx.db.tenant(scopeOf(caller), async (tx) => {
    const row = await deleteByPath(tx, caller.project.id, path);
    if (!row || (caller.keyKind === 'publishable' && row.owner_id !== caller.userId)) throw StorageErrors.file_not_found();
    if (row.status === 'confirmed' && row.provider === 'internal') await refund(tx, storageCounter(row.project_id), row.size);
    // Removed before commit: if the store fails, the row and the charge stay and a retry works.
    const driver = backendOfFile(ctx, caller.project, row.provider);
    if (driver) await driver.remove([path]);
    else ctx.log.warn({ path }, 'storage: file deleted, but its bucket is no longer configured');
  });
}
