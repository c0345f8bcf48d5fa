/**
 * Upload requests and deletion (docs/wire-compatibility.md §6), knowing no HTTP; confirmation is in confirm.ts.
 * Quota: charged at request time by the guarded `plinth_reserve` in the statement that inserts
 * the pending row (the signed PUT writes the bytes before any confirm, so pending uploads count),
 * refunded in the transaction that deletes the file, pending or confirmed (or sweeps it).
 */
import type { AppContext } from '../../context.js';
import type { TenantScope } from '../../db/pool.js';
import { objectId } from '../../lib/ids.js';
import { METRICS, quotaCap } from '../../lib/quota-queries.js';
import { backendFor, backendOfFile, storeCall } from './backends.js';
import { StorageErrors } from './errors.js';
import { buildPath, checkPath, derivedPrefix, hasControlChars } from './paths.js';
import { insertPendingFile } from './batching.js';
import { deleteByPath, type FileRow } from './queries.js';
import { SIGNED_URL_TTL_SECONDS } from './signing.js';
import { ensureSweep } from './sweep.js';
import { checkDeclared } from './upload-rules.js';
import type { Caller } from './caller.js';

export type { Caller } from './caller.js';

export const storageCounter = (projectId: string) => ({ subjectId: projectId, metric: METRICS.storageBytes });

export const scopeOf = (c: Caller): TenantScope => ({ projectId: c.project.id, userId: c.userId, keyKind: c.keyKind });

export const isSize = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const isText = (v: unknown, max: number): v is string =>
  typeof v === 'string' && v.trim() !== '' && v.length <= max && !hasControlChars(v);

interface UploadRequestInput {
  filename?: unknown;
  contentType?: unknown;
  size?: unknown;
  /** The file's privacy (absent: the project's default). */
  private?: unknown;
}

export async function requestUpload(ctx: AppContext, caller: Caller, input: UploadRequestInput) {
  const { filename, contentType, size } = input;
  if (!isText(filename, 1024) || !isText(contentType, 255) || !isSize(size)) throw StorageErrors.upload_request_invalid();
  const { project } = caller;
  if (size > project.plan.maxFileBytes) throw StorageErrors.file_too_large();
  checkDeclared(project, contentType, size);
  const now = ctx.clock.now();
  const { driver, provider } = backendFor(ctx, project);
  const id = objectId(now.getTime());
  const path = buildPath(project.id, id, filename);
  const expiresAt = new Date(now.getTime() + SIGNED_URL_TTL_SECONDS * 1000);
  const type = contentType.trim();
  const presign = () => driver.presignPut({ path, size, contentType: type, signedAt: now, expiresAt });
  const signedUrl = await storeCall(ctx, 'presign', { projectId: project.id }, presign, 'Could not generate upload URL');
  // The cleanup sweep is scheduled first: a crash in between never leaves an unswept row.
  await ensureSweep(ctx, now);
  const scope = scopeOf(caller);
  const batch = { projectId: project.id, ownerId: caller.userId, provider, limit: provider === 'internal' ? quotaCap(project.plan.storageBytes) : null };
  const file = { id, path, size, contentType: type, createdAt: now, private: typeof input.private === 'boolean' ? input.private : null };
  const inserted = await insertPendingFile(ctx, { scope, batch }, file);
  if (!inserted) throw StorageErrors.storage_limit_exceeded();
  return { signedUrl, filePath: path, expiresAt: expiresAt.toISOString() };
}

export async function deleteFile(ctx: AppContext, caller: Caller, input: { path?: unknown }): Promise<void> {
  if (typeof input.path !== 'string' || !input.path) throw StorageErrors.file_path_required();
  const { path, fileId } = checkPath(caller.project.id, input.path);
  let provider: FileRow['provider'] = 'internal';
  await ctx.db.tenant(scopeOf(caller), async (tx) => {
    const row = await deleteByPath(tx, caller.project.id, path);
    if (!row || (caller.keyKind === 'publishable' && row.owner_id !== caller.userId)) throw StorageErrors.file_not_found();
    provider = row.provider;
    // Removed before commit: if the store fails, the row and the charge stay and a retry works.
    const driver = backendOfFile(ctx, caller.project, row.provider);
    if (driver) await storeCall(ctx, 'remove', { path }, () => driver.remove([path]));
    else ctx.log.warn({ path }, 'storage: file deleted, but its bucket is no longer configured');
  });
  // Its image derivatives (images/service.ts), and what tus kept of it (a resumable upload's
  // session, S3 multipart), once the file is gone.
  const driver = backendOfFile(ctx, caller.project, provider);
  await driver?.removePrefix(derivedPrefix(caller.project.id, fileId)).catch((err) => ctx.log.warn({ err, path }, 'storage: could not remove image derivatives'));
  await ctx.storage.resumable.forget(path).catch((err) => ctx.log.warn({ err, path }, 'storage: could not drop a resumable upload session'));
}
