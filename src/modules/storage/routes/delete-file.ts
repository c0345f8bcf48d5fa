/** DELETE /api/storage/file: removes a file and frees its quota in one transaction (§6.4). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { StorageErrors } from '../errors.js';
import { deleteFile } from '../service.js';
import { storageCaller } from './caller.js';
import { ApiKeyHeaders, errorReplies } from './schemas.js';

const Body = Type.Object({ path: Type.String({ minLength: 1, maxLength: 2048, description: 'the path returned by upload' }) });

const Reply = Type.Object({ success: Type.Literal(true), data: Type.Object({}), message: Type.String() });

export default async function deleteFileRoute(app: App, ctx: AppContext): Promise<void> {
  app.delete(
    '/api/storage/file',
    {
      schema: {
        tags: ['storage'],
        summary: 'Delete a file (irreversible); with a pk only the uploading user may',
        headers: ApiKeyHeaders,
        body: Body,
        response: { 200: Reply, ...errorReplies(400, 401, 403, 404, 429, 502) },
      },
      attachValidation: true,
    },
    async (req) => {
      const caller = await storageCaller(ctx, req);
      if (req.validationError) throw StorageErrors.file_path_required();
      await deleteFile(ctx, caller, req.body);
      return { success: true as const, data: {}, message: 'File deleted successfully' };
    },
  );
}
