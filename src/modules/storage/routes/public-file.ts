/**
 * GET/HEAD /api/storage/public/<projectId>/<file>: serving of confirmed files of the local
 * backend, with Content-Type, ETag, Last-Modified, Cache-Control, Range (206/416) and
 * conditional requests (304). Uploaded content is sandboxed (CSP) and never MIME-sniffed.
 * A private file needs a signed URL (`expires`, `sig`), the secret key or its owner's Bearer
 * token (download-service.ts); it is then served the same way, `Cache-Control: private`.
 */
import { createReadStream } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { localDriver } from '../backends.js';
import { StorageErrors } from '../errors.js';
import { checkPath } from '../paths.js';
import { fileWithProjectByPath } from '../queries.js';
import { etagOf, notModified, parseRange, rangeStillValid } from '../ranges.js';
import { bearerToken } from '../../operators/auth.js';
import { checkRead } from '../download-service.js';
import { isPrivate } from '../file-settings.js';
import { deriveUrlKey } from '../signing.js';
import { hasEncodedTricks } from './caller.js';
import { errorReplies } from './schemas.js';

const Params = Type.Object({ '*': Type.String() });
const Query = Type.Object(
  {
    expires: Type.Optional(Type.String({ description: 'signed download URL: expiry (Unix seconds)' })),
    sig: Type.Optional(Type.String({ description: 'signed download URL: signature' })),
  },
  { additionalProperties: true },
);

function attemptOf(req: FastifyRequest) {
  const q = req.query as Record<string, string | undefined>;
  const apiKey = req.headers['x-api-key'];
  return { expires: q.expires, sig: q.sig, apiKey: typeof apiKey === 'string' ? apiKey : undefined, bearer: bearerToken(req) };
}

async function serve(ctx: AppContext, key: Buffer, req: FastifyRequest, reply: FastifyReply) {
  const local = localDriver(ctx);
  if (!local) throw StorageErrors.file_not_found();
  if (hasEncodedTricks(req.raw.url ?? '')) throw StorageErrors.access_denied();
  const raw = (req.params as { '*': string })['*'];
  const { path } = checkPath(raw.split('/')[0] ?? '', raw);
  // The file and its project's settings in one statement (privacy, signing, the owner's tokens).
  const found = await fileWithProjectByPath(ctx.db.admin, path);
  const row = found?.file;
  const stat = row?.status === 'confirmed' && row.provider === 'internal' && found?.project ? await local.stat(path) : null;
  const project = stat && found?.project ? ctx.projects.recordOf(found.project) : null;
  if (!row || !stat || !project) throw StorageErrors.file_not_found();
  await checkRead(ctx, key, project, row, attemptOf(req));
  const restricted = isPrivate(project, row);
  const modified = new Date(row.confirmed_at ?? row.created_at);
  const etag = etagOf(row.id, stat.size, modified);
  const ifRange = typeof req.headers['if-range'] === 'string' ? req.headers['if-range'] : undefined;
  const range = rangeStillValid(ifRange, etag, modified) ? parseRange(req.headers.range, stat.size) : null;
  if (range === 'unsatisfiable' && !notModified(req.headers, etag, modified)) {
    throw StorageErrors.range_not_satisfiable(undefined, undefined, { headers: { 'content-range': `bytes */${stat.size}` } });
  }
  reply.headers({
    'content-type': row.content_type,
    etag,
    'last-modified': modified.toUTCString(),
    // Revalidate on every use (ETag/Last-Modified make that a cheap 304): a deleted or
    // replaced file must not stay served from caches for a day.
    'cache-control': restricted ? 'private, no-cache' : 'public, no-cache',
    'accept-ranges': 'bytes',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'cross-origin-resource-policy': 'cross-origin',
  });
  if (notModified(req.headers, etag, modified)) return reply.code(304).send();
  const { start, end } = (range !== 'unsatisfiable' && range) || { start: 0, end: stat.size - 1 };
  if (range && range !== 'unsatisfiable') reply.code(206).header('content-range', `bytes ${start}-${end}/${stat.size}`);
  reply.header('content-length', String(end - start + 1));
  if (req.method === 'HEAD') return reply.send();
  return reply.send(createReadStream(local.fileOf(path), { start, end }));
}

export default async function publicFileRoute(app: App, ctx: AppContext): Promise<void> {
  const key = deriveUrlKey(ctx.config.encryptionKey);
  app.route({
    method: ['GET', 'HEAD'],
    url: '/api/storage/public/*',
    schema: {
      tags: ['storage'],
      summary: 'Download a confirmed file of the local backend (supports Range); a private one on a signed URL, the secret key or its owner\'s Bearer token',
      params: Params,
      querystring: Query,
      response: errorReplies(403, 404, 416),
    },
    handler: (req, reply) => serve(ctx, key, req as FastifyRequest, reply),
  });
}
