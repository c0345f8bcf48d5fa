/**
 * Resumable uploads over tus 1.0 (https://tus.io/protocols/resumable-upload): POST
 * /api/storage/tus creates an upload (Upload-Length, Upload-Metadata `filename`, `filetype`),
 * HEAD /api/storage/tus/<id> reads its offset, PATCH appends bytes
 * (`application/offset+octet-stream`), DELETE abandons it. Authenticated like upload-request
 * (the group's key check, then the end user for a publishable key); the protocol itself is
 * @tus/server's, given the raw request in a scope whose body parser passes the stream through.
 */
import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { StorageErrors } from '../errors.js';
import { checkTusHeaders } from '../resumable/headers.js';
import { TUS_PATH } from '../resumable/server.js';
import { deleteFile } from '../service.js';
import { storageCaller } from './caller.js';
import { ApiKeyHeaders, errorReplies } from './schemas.js';

const TusHeaders = Type.Composite([
  ApiKeyHeaders,
  Type.Object(
    {
      'tus-resumable': Type.Optional(Type.String({ description: '1.0.0' })),
      'upload-length': Type.Optional(Type.String({ description: 'POST: the file size in bytes (required; deferred length is refused)' })),
      'upload-metadata': Type.Optional(Type.String({ description: 'POST: `filename <base64>,filetype <base64>`' })),
      'upload-offset': Type.Optional(Type.String({ description: 'PATCH: the offset the body starts at (the HEAD answer)' })),
    },
    { additionalProperties: true },
  ),
]);
const Params = Type.Object({ uploadId: Type.String({ description: 'the last segment of the Location the POST answered (opaque, fixed length)' }) });
const Empty = Type.Null({ description: 'no body; tus headers (Location, Upload-Offset, Upload-Length, Upload-Expires, Plinth-File-Path)' });

async function serveTus(ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  // @tus/server answers a missing or other version in plain text; ours has the envelope.
  if (req.headers['tus-resumable'] !== '1.0.0') throw StorageErrors.tus_resumable_required(undefined, undefined, { headers: { 'tus-version': '1.0.0' } });
  const caller = await storageCaller(ctx, req);
  await checkTusHeaders(req.method, req.headers);
  // HEAD/PATCH: the upload the URL's id names, as this caller may see it (403/404 otherwise).
  const uploadId = (req.params as { uploadId?: string }).uploadId;
  const path = req.method === 'POST' ? undefined : await ctx.storage.resumable.pathOf(caller, uploadId);
  // Headers set by the CORS hook go out with tus's own response.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
  reply.hijack();
  try {
    await ctx.storage.resumable.handle(req.raw, reply.raw, caller, path);
  } catch (err) {
    ctx.log.warn({ err }, 'storage: resumable request ended early');
    if (!reply.raw.headersSent) reply.raw.writeHead(400).end();
    else reply.raw.destroy();
  }
}

async function terminate(ctx: AppContext, req: FastifyRequest<{ Params: { uploadId: string } }>, reply: FastifyReply) {
  const caller = await storageCaller(ctx, req);
  const path = await ctx.storage.resumable.pathOf(caller, req.params.uploadId);
  await deleteFile(ctx, caller, { path });
  return reply.code(204).header('tus-resumable', '1.0.0').send();
}

export default async function resumableRoutes(app: App, ctx: AppContext): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    const base = { tags: ['storage'], headers: TusHeaders };
    scope.post<{ Body: Readable }>(
      TUS_PATH,
      {
        schema: {
          ...base,
          summary: 'Create a resumable (tus) upload: charges Upload-Length to the storage quota',
          response: { 201: Empty, ...errorReplies(400, 401, 403, 409, 412, 413) },
        },
      },
      (req, reply) => serveTus(ctx, req, reply),
    );
    scope.route<{ Params: { uploadId: string }; Body: Readable }>({
      method: ['HEAD', 'PATCH'],
      url: `${TUS_PATH}/:uploadId`,
      schema: {
        ...base,
        params: Params,
        summary: 'HEAD: the upload offset; PATCH: append bytes at Upload-Offset (the last byte confirms the file)',
        response: { 200: Empty, 204: Empty, ...errorReplies(400, 401, 403, 404, 409, 410, 412, 415, 423) },
      },
      handler: (req, reply) => serveTus(ctx, req, reply),
    });
    scope.delete<{ Params: { uploadId: string } }>(
      `${TUS_PATH}/:uploadId`,
      {
        schema: { ...base, params: Params, summary: 'Abandon a resumable upload (or delete its finished file): bytes and quota freed', response: { 204: Empty, ...errorReplies(401, 403, 404) } },
      },
      (req, reply) => terminate(ctx, req, reply),
    );
  });
}
