/**
 * Image transformations of stored files, knowing no HTTP. A rendering (a derivative) is cached
 * in the file's store under `<projectId>/_derived/<fileId>/<hash of the canonical transform>`,
 * named after the file id: files never change in place (a new upload is a new id), and deleting
 * the file removes its derivatives (service.ts), so a cached derivative is never stale. Its
 * ETag is known before anything is read, so a revalidation (If-None-Match) costs one row read.
 * Only cache misses render, and they count against the project's per-minute budget.
 */
import type { AppContext } from '../../../context.js';
import { sha256Hex } from '../../../lib/crypto.js';
import { backendOfFile, storeCall } from '../backends.js';
import { checkRead, type ReadAttempt } from '../download-service.js';
import { StorageErrors } from '../errors.js';
import { fileSettingsOf, isPrivate } from '../file-settings.js';
import { checkPath, derivedPrefix, projectOfPath } from '../paths.js';
import { fileWithProjectByPath } from '../queries.js';
import { notModified } from '../ranges.js';
import { canonical, outputFormat, parseTransform, type OutFormat, type TransformQuery } from './params.js';

const MIME: Record<OutFormat, string> = { webp: 'image/webp', avif: 'image/avif', jpeg: 'image/jpeg', png: 'image/png' };


export interface RenderRequest {
  rawPath: string;
  query: TransformQuery;
  accept?: string;
  headers: Record<string, string | string[] | undefined>;
  attempt: ReadAttempt;
}

export interface RenderAnswer {
  status: 200 | 304;
  headers: Record<string, string>;
  body?: Buffer;
}

export async function renderFile(ctx: AppContext, key: Buffer, r: RenderRequest): Promise<RenderAnswer> {
  const { path, fileId } = checkPath(projectOfPath(r.rawPath), r.rawPath);
  const t = parseTransform(r.query);
  // The file and its project's settings in one statement (privacy, signing, the file's store).
  const found = await fileWithProjectByPath(ctx.db.admin, path);
  const row = found?.file;
  const project = row?.status === 'confirmed' && found?.project ? ctx.projects.recordOf(found.project) : null;
  if (!row || !project) throw StorageErrors.file_not_found();
  const settings = fileSettingsOf(project);
  await checkRead(ctx, key, project, row, { ...r.attempt, transform: canonical(t), signatureRequired: settings.signedTransformsOnly });
  // `auto` resolved here (from Accept and the original's type): the variant is part of the key.
  const format = outputFormat(t, r.accept, row.content_type === 'image/png' ? 'png' : 'jpeg');
  const variant = canonical({ ...t, format });
  const hash = sha256Hex(variant).slice(0, 32);
  const etag = `"${fileId}-${hash.slice(0, 16)}"`;
  const headers: Record<string, string> = {
    'content-type': MIME[format],
    etag,
    'cache-control': isPrivate(project, row) ? 'private, no-cache' : 'public, no-cache',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'cross-origin-resource-policy': 'cross-origin',
    ...(t.format === 'auto' && { vary: 'Accept' }),
  };
  if (notModified(r.headers, etag, new Date(0))) return { status: 304, headers };
  const driver = backendOfFile(ctx, project, row.provider);
  if (!driver) throw StorageErrors.file_not_found();
  const derived = `${derivedPrefix(project.id, fileId)}/${hash}`;
  const cached = await storeCall(ctx, 'read', { path: derived }, () => driver.read(derived, ctx.config.storage.images.maxInputBytes));
  if (Buffer.isBuffer(cached)) return { status: 200, headers: { ...headers, 'x-plinth-cache': 'hit' }, body: cached };
  const body = await renderOnce(ctx, derived, async () => {
    await ctx.limits.enforce(`project:${project.id}:image-renders`, ctx.config.storage.images.missesPerMinute, 60, 'Too many image transformations (per minute) for this project.');
    const original = await storeCall(ctx, 'read', { path }, () => driver.read(path, ctx.config.storage.images.maxInputBytes));
    if (original === null) throw StorageErrors.file_not_found();
    if (original === 'too_large') throw StorageErrors.image_too_large();
    const out = await ctx.storage.images.render(original, { ...t, format });
    await driver.putBuffer(derived, out.body, out.contentType).catch((err) => ctx.log.warn({ err, path: derived }, 'storage: could not cache an image derivative'));
    return out.body;
  });
  return { status: 200, headers: { ...headers, 'x-plinth-cache': 'miss' }, body };
}

/** Concurrent requests for one derivative on this node share one rendering. */
async function renderOnce(ctx: AppContext, key: string, work: () => Promise<Buffer>): Promise<Buffer> {
  const inflight = ctx.storage.rendering;
  const running = inflight.get(key);
  if (running) return running;
  const p = work().finally(() => inflight.delete(key));
  inflight.set(key, p);
  return p;
}
