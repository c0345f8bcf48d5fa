/**
 * Private files (docs/storage.md "Private files"), knowing no HTTP: signed download URLs (for
 * the secret key, or for the owning user), per-file privacy, and who may read a private file
 * on the serving route (a valid signature, the project's secret key, or the owner's token).
 */
import type { AppContext } from '../../context.js';
import type { ProjectRecord } from '../projects/cache.js';
import { verifyAccessToken } from '../auth/tokens.js';
import { backendOfFile, storeCall } from './backends.js';
import { StorageErrors } from './errors.js';
import { isPrivate } from './file-settings.js';
import { checkPath } from './paths.js';
import { findByPath, setFilePrivate, type FileRow } from './queries.js';
import { scopeOf, type Caller } from './service.js';
import { deriveUrlKey, signedDownloadUrl, verifyDownload } from './signing.js';
import { canonical, parseTransform, transformQuery, type TransformQuery } from './images/params.js';

export const DOWNLOAD_TTL_SECONDS = { default: 300, min: 10, max: 3600 };

/** A confirmed file the caller may see (secret key: any of the project; pk + user: their own), else 404. */
async function ownFile(ctx: AppContext, caller: Caller, rawPath: unknown): Promise<FileRow> {
  if (typeof rawPath !== 'string' || !rawPath) throw StorageErrors.file_path_required();
  const { path } = checkPath(caller.project.id, rawPath);
  const row = await ctx.db.read(scopeOf(caller), (db) => findByPath(db, caller.project.id, path));
  if (!row || row.status !== 'confirmed' || (caller.keyKind === 'publishable' && row.owner_id !== caller.userId)) throw StorageErrors.file_not_found();
  return row;
}

export async function downloadUrl(ctx: AppContext, caller: Caller, input: { path?: unknown; expiresIn?: number; transform?: TransformQuery }) {
  const row = await ownFile(ctx, caller, input.path);
  const { min, max } = DOWNLOAD_TTL_SECONDS;
  const ttl = Math.min(max, Math.max(min, input.expiresIn ?? DOWNLOAD_TTL_SECONDS.default));
  const now = ctx.clock.now();
  const expiresAt = new Date((Math.floor(now.getTime() / 1000) + ttl) * 1000);
  if (input.transform) {
    // A signed rendering is served by Plinth (render route) on both backends.
    const t = parseTransform(input.transform);
    const grant = { path: row.path, expires: Math.floor(expiresAt.getTime() / 1000), transform: canonical(t) };
    const url = signedDownloadUrl(ctx.config.publicUrl, deriveUrlKey(ctx.config.encryptionKey), grant, transformQuery(t)).replace('/api/storage/public/', '/api/storage/render/');
    return { url, path: row.path, private: isPrivate(caller.project, row), expiresAt: expiresAt.toISOString() };
  }
  const driver = backendOfFile(ctx, caller.project, row.provider);
  if (!driver) throw StorageErrors.storage_failed('The bucket this file was uploaded to is no longer configured.');
  const url = await storeCall(ctx, 'presign', { path: row.path }, () => driver.presignGet(row.path, now, expiresAt));
  return { url, path: row.path, private: isPrivate(caller.project, row), expiresAt: expiresAt.toISOString() };
}

/** Makes one file private or public (null: the project's default). */
export async function setPrivacy(ctx: AppContext, caller: Caller, input: { path?: unknown; private?: unknown }) {
  const value = input.private;
  if (value !== null && typeof value !== 'boolean') throw StorageErrors.file_path_required('path and private (true, false or null) are required.');
  const row = await ownFile(ctx, caller, input.path);
  const updated = await ctx.db.tenant(scopeOf(caller), (tx) => setFilePrivate(tx, caller.project.id, row.path, value));
  if (!updated) throw StorageErrors.file_not_found();
  return { path: updated.path, private: isPrivate(caller.project, updated) };
}

export interface ReadAttempt {
  /** `expires` and `sig` of a signed URL, when given. */
  expires?: string;
  sig?: string;
  apiKey?: string;
  bearer?: string;
  /** The signed transform (canonical parameters) the request asks for, if any. */
  transform?: string;
  /** A signature is needed even for a public file (the project accepts signed transforms only). */
  signatureRequired?: boolean;
}

/**
 * Whether this request may read this file: a public file always; a private one only with a
 * valid, unexpired signature for this very path (and rendering), the project's secret key, or
 * the owning user's access token. Refusals: 403 (never a 404 that would hide a bad signature).
 */
export async function checkRead(ctx: AppContext, key: Buffer, project: ProjectRecord, row: FileRow, a: ReadAttempt): Promise<void> {
  const restricted = isPrivate(project, row);
  if (!restricted && !a.signatureRequired) return;
  if (a.sig !== undefined) {
    if (!a.expires || !/^\d{1,12}$/.test(a.expires)) throw StorageErrors.download_url_invalid();
    const verdict = verifyDownload(key, { path: row.path, expires: Number(a.expires), transform: a.transform }, a.sig, ctx.clock.now().getTime());
    if (verdict === 'invalid') throw StorageErrors.download_url_invalid();
    if (verdict === 'expired') throw StorageErrors.download_url_expired();
    return;
  }
  if (a.apiKey) {
    const resolved = await ctx.projects.resolveKey(a.apiKey);
    if (resolved?.kind === 'secret' && resolved.project.id === row.project_id) return;
  }
  if (a.bearer && row.owner_id) {
    const userId = await verifyAccessToken(project, a.bearer, ctx.clock.now());
    if (userId === row.owner_id) return;
  }
  throw restricted ? StorageErrors.file_private() : StorageErrors.download_url_invalid('This project serves image transformations on signed URLs only.');
}
