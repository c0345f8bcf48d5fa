/** POST /api/storage/upload-request: step 1 of the upload flow (docs/wire-compatibility.md §6.1). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { StorageErrors } from '../errors.js';
import { requestUpload } from '../service.js';
import { storageCaller } from './caller.js';
import { ApiKeyHeaders, Envelope, errorReplies } from './schemas.js';

const Body = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: 1024 }),
  contentType: Type.String({ minLength: 1, maxLength: 255 }),
  size: Type.Integer({ minimum: 1, description: 'bytes; at most 10 MB' }),
  private: Type.Optional(Type.Boolean({ description: "served only on signed URLs, to the secret key or to its owner (default: the project's setting)" })),
});

const Reply = Envelope(
  Type.Object({
    signedUrl: Type.String({ description: 'PUT the raw bytes here with the same Content-Type and size' }),
    filePath: Type.String({ description: '<projectId>/<id>_<name>: send it to upload-confirm' }),
    expiresAt: Type.String({ format: 'date-time' }),
  }),
);

export default async function uploadRequestRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/storage/upload-request',
    {
      schema: {
        tags: ['storage'],
        summary: 'Get a signed URL to upload one file (valid 10 minutes)',
        headers: ApiKeyHeaders,
        body: Body,
        response: { 200: Reply, ...errorReplies(400, 401, 403, 413, 429) },
      },
      attachValidation: true,
    },
    async (req) => {
      const caller = await storageCaller(ctx, req);
      if (req.validationError) throw StorageErrors.upload_request_invalid();
      return ok(await requestUpload(ctx, caller, req.body), 'Upload URL generated successfully.');
    },
  );
}
