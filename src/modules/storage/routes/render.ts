/**
 * GET /api/storage/render/<projectId>/<file>?width&height&fit&format&quality: an image
 * transformation of a confirmed file, on either backend (images/service.ts). A public file's
 * renderings are public unless the project accepts signed transform URLs only; a private
 * file's need what its download needs (a signed URL for this very rendering, the secret key or
 * the owner's token).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { bearerToken } from '../../operators/auth.js';
import { StorageErrors } from '../errors.js';
import { renderFile } from '../images/service.js';
import { FITS, FORMATS, MAX_SIDE, type TransformQuery } from '../images/params.js';
import { deriveUrlKey } from '../signing.js';
import { hasEncodedTricks } from './caller.js';
import { errorReplies } from './schemas.js';

// fit and format are any string here, their values listed in the descriptions: the service
// answers an unknown one with the documented 400 transform_invalid (images/params.ts), and a
// query the schema still refuses (a parameter given twice) is mapped to the same code below.
const Query = Type.Object(
  {
    width: Type.Optional(Type.String({ description: `1–${MAX_SIDE} px` })),
    height: Type.Optional(Type.String({ description: `1–${MAX_SIDE} px` })),
    fit: Type.Optional(Type.String({ description: `${FITS.join(', ')}; default cover` })),
    format: Type.Optional(Type.String({ description: `${FORMATS.join(', ')}; default auto: WebP when Accept allows, else PNG/JPEG` })),
    quality: Type.Optional(Type.String({ description: '20–100, default 80' })),
    expires: Type.Optional(Type.String({ description: 'signed URL: expiry (Unix seconds)' })),
    sig: Type.Optional(Type.String({ description: 'signed URL: signature over the file and this transformation' })),
  },
  { additionalProperties: true },
);

async function render(ctx: AppContext, key: Buffer, req: FastifyRequest, reply: FastifyReply) {
  if (hasEncodedTricks(req.raw.url ?? '')) throw StorageErrors.access_denied();
  if (req.validationError) throw StorageErrors.transform_invalid('Each transformation parameter is a single value, given once.');
  const q = req.query as TransformQuery & { expires?: string; sig?: string };
  const apiKey = req.headers['x-api-key'];
  const answer = await renderFile(ctx, key, {
    rawPath: (req.params as { '*': string })['*'],
    query: q,
    accept: req.headers.accept,
    headers: req.headers,
    attempt: { expires: q.expires, sig: q.sig, apiKey: typeof apiKey === 'string' ? apiKey : undefined, bearer: bearerToken(req) },
  });
  reply.code(answer.status).headers(answer.headers);
  return answer.body ? reply.send(answer.body) : reply.send();
}

export default async function renderRoute(app: App, ctx: AppContext): Promise<void> {
  const key = deriveUrlKey(ctx.config.encryptionKey);
  app.get(
    '/api/storage/render/*',
    {
      schema: {
        tags: ['storage'],
        summary: 'An image transformation of a file (resize, fit, format, quality; EXIF orientation applied, metadata stripped), cached',
        params: Type.Object({ '*': Type.String() }),
        querystring: Query,
        response: errorReplies(400, 403, 404, 415, 422, 429, 503),
      },
      attachValidation: true,
    },
    (req, reply) => render(ctx, key, req, reply),
  );
}
