/** POST /api/storage/upload-confirm: step 3, verify the object and charge the quota (§6.3). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { StorageErrors } from '../errors.js';
import { confirmUpload } from '../confirm.js';
import { storageCaller } from './caller.js';
import { ApiKeyHeaders, Envelope, FileView, errorReplies } from './schemas.js';

const Body = Type.Object({
  filePath: Type.String({ minLength: 1, maxLength: 2048 }),
  size: Type.Integer({ minimum: 1 }),
});

export default async function uploadConfirmRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/storage/upload-confirm',
    {
      schema: {
        tags: ['storage'],
        summary: 'Confirm an uploaded file: checks its size, charges the storage quota once',
        headers: ApiKeyHeaders,
        body: Body,
        response: { 200: Envelope(FileView), ...errorReplies(400, 401, 403, 404, 409, 429, 502) },
      },
      attachValidation: true,
    },
    async (req) => {
      const caller = await storageCaller(ctx, req);
      if (req.validationError) throw StorageErrors.upload_confirm_invalid();
      return ok(await confirmUpload(ctx, caller, req.body), 'Upload confirmed');
    },
  );
}
