/**
 * PUT /api/storage/objects/<projectId>/<file>?expires&size&ct&sig: the local backend's signed
 * upload URL (step 2). Checks the HMAC over method, path, expiry, size and content type, that
 * Content-Length and Content-Type equal what was signed, and that the upload is still pending;
 * then streams the body to disk (temp file + fsync + rename; never buffered whole).
 * Registered in its own scope with a pass-through body parser; preflights get the PUT/GET/HEAD
 * methods and the content-type/content-length headers browsers need.
 */
import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { localDriver } from '../backends.js';
import { UploadTooShort } from '../drivers/local.js';
import { StorageErrors } from '../errors.js';
import { checkPath } from '../paths.js';
import { fileByPath } from '../queries.js';
import { deriveUrlKey, normaliseType, verifyGrant } from '../signing.js';
import { hasEncodedTricks } from './caller.js';
import { errorReplies } from './schemas.js';

const MAX_UPLOAD = 10 * 1024 * 1024 + 64 * 1024;

const Query = Type.Object({
  expires: Type.Optional(Type.String()),
  size: Type.Optional(Type.String()),
  ct: Type.Optional(Type.String()),
  sig: Type.Optional(Type.String()),
});
type Req = FastifyRequest<{ Params: { '*': string }; Querystring: Record<string, string | undefined>; Body: Readable }>;

function checkGrant(ctx: AppContext, key: Buffer, req: Req) {
  if (hasEncodedTricks(req.raw.url ?? '')) throw StorageErrors.access_denied();
  const raw = req.params['*'];
  const { path } = checkPath(raw.split('/')[0] ?? '', raw);
  const { expires, size, ct, sig } = req.query;
  if (!expires || !size || ct === undefined || !sig || !/^\d+$/.test(expires) || !/^\d+$/.test(size)) {
    throw StorageErrors.signed_url_invalid();
  }
  const grant = { path, expires: Number(expires), size: Number(size), contentType: ct };
  const verdict = verifyGrant(key, 'PUT', grant, sig, ctx.clock.now().getTime());
  if (verdict === 'invalid') throw StorageErrors.signed_url_invalid();
  if (verdict === 'expired') throw StorageErrors.signed_url_expired();
  if (req.headers['content-length'] !== String(grant.size)) throw StorageErrors.upload_length_mismatch();
  if (normaliseType(req.headers['content-type'] ?? '') !== normaliseType(ct)) throw StorageErrors.upload_type_mismatch();
  return grant;
}

async function put(ctx: AppContext, key: Buffer, req: Req, reply: FastifyReply) {
  const local = localDriver(ctx);
  if (!local) throw StorageErrors.file_not_found();
  const grant = checkGrant(ctx, key, req);
  const row = await fileByPath(ctx.db.admin, grant.path);
  if (!row) throw StorageErrors.file_not_found('This upload no longer exists; request a new upload URL.');
  if (row.status !== 'pending') throw StorageErrors.upload_already_confirmed();
  try {
    await local.write(grant.path, req.body, grant.size);
  } catch (err) {
    if (err instanceof UploadTooShort || req.raw.destroyed) throw StorageErrors.upload_incomplete();
    throw err;
  }
  return reply.code(200).header('etag', `"${row.id}"`).send();
}

const CORS_METHODS = 'PUT, OPTIONS, GET, HEAD';

function preflightHeaders(req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (e: null, p: unknown) => void) {
  if (reply.getHeader('access-control-allow-origin')) {
    const asked = String(req.headers['access-control-request-headers'] ?? '');
    const headers = new Set(['content-type', 'content-length', ...asked.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean)]);
    reply.header('access-control-allow-methods', CORS_METHODS);
    reply.header('access-control-allow-headers', [...headers].join(', '));
  }
  done(null, payload);
}

export default async function putObjectRoute(app: App, ctx: AppContext): Promise<void> {
  const key = deriveUrlKey(ctx.config.encryptionKey);
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    scope.put<{ Params: { '*': string }; Querystring: Record<string, string | undefined>; Body: Readable }>(
      '/api/storage/objects/*',
      {
        bodyLimit: MAX_UPLOAD,
        schema: {
          tags: ['storage'],
          summary: 'Signed upload URL of the local backend: PUT the raw file bytes (step 2)',
          querystring: Query,
          response: errorReplies(400, 403, 404, 409),
        },
        onSend: preflightHeaders,
      },
      (req, reply) => put(ctx, key, req, reply),
    );
    scope.options('/api/storage/objects/*', { schema: { hide: true }, onSend: preflightHeaders }, (_req, reply) =>
      reply.code(204).send(),
    );
  });
}
