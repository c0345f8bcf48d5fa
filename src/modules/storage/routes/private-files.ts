/**
 * Private files on the public API (secret key, or publishable key + the owning user):
 * POST /api/storage/download-url issues a short-lived signed URL for one file; PATCH
 * /api/storage/file makes one file private or public (null: the project's default).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { DOWNLOAD_TTL_SECONDS, downloadUrl, setPrivacy } from '../download-service.js';
import { StorageErrors } from '../errors.js';
import { storageCaller } from './caller.js';
import { ApiKeyHeaders, Envelope, errorReplies } from './schemas.js';

const Path = Type.String({ minLength: 1, maxLength: 2048, description: 'the path returned by upload' });
export const DownloadBody = Type.Object({
  path: Path,
  expiresIn: Type.Optional(Type.Integer({ minimum: DOWNLOAD_TTL_SECONDS.min, maximum: DOWNLOAD_TTL_SECONDS.max, description: `seconds (default ${DOWNLOAD_TTL_SECONDS.default})` })),
  transform: Type.Optional(
    Type.Object(
      { width: Type.Optional(Type.String()), height: Type.Optional(Type.String()), fit: Type.Optional(Type.String()), format: Type.Optional(Type.String()), quality: Type.Optional(Type.String()) },
      { description: 'sign a URL of this image transformation (render route) instead of the file; the signature covers the parameters' },
    ),
  ),
});
export const DownloadReply = Type.Object({
  url: Type.String({ description: 'GET it (Range, ETag and If-None-Match work) until expiresAt' }),
  path: Type.String(),
  private: Type.Boolean(),
  expiresAt: Type.String({ format: 'date-time' }),
});
// One schema with both types: Ajv's type coercion would turn null into false (or false into
// null) in a union of two schemas.
const NullableBoolean = Type.Unsafe<boolean | null>({ type: ['boolean', 'null'], description: "null: follow the project's default" });
export const PrivacyBody = Type.Object({ path: Path, private: NullableBoolean });
export const PrivacyReply = Type.Object({ path: Type.String(), private: Type.Boolean() });

export default async function privateFileRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/storage/download-url',
    {
      attachValidation: true,
      schema: {
        tags: ['storage'],
        summary: 'A short-lived signed URL to download one file (a private one too); with a pk only the owner\'s files',
        headers: ApiKeyHeaders,
        body: DownloadBody,
        response: { 200: Envelope(DownloadReply), ...errorReplies(400, 401, 403, 404, 429, 502) },
      },
    },
    async (req) => {
      const caller = await storageCaller(ctx, req);
      if (req.validationError) throw StorageErrors.file_path_required('path is required; expiresIn is 10 to 3600 seconds.');
      return ok(await downloadUrl(ctx, caller, req.body), 'Download URL generated');
    },
  );
  app.patch(
    '/api/storage/file',
    {
      attachValidation: true,
      schema: {
        tags: ['storage'],
        summary: 'Make one file private or public; with a pk only the owner may',
        headers: ApiKeyHeaders,
        body: PrivacyBody,
        response: { 200: Envelope(PrivacyReply), ...errorReplies(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const caller = await storageCaller(ctx, req);
      if (req.validationError) throw StorageErrors.file_path_required('path and private (true, false or null) are required.');
      return ok(await setPrivacy(ctx, caller, req.body), 'File updated');
    },
  );
}
