/**
 * DELETE /api/data/:collectionName/:id: soft delete (isDeleted, deletedAt); `?hard=true` with
 * the secret key purges and frees the bytes. POST …/:id/restore undoes a soft delete.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { writeAccess } from '../access.js';
import { DocumentParams, loadTarget, TAGS } from '../target.js';
import { deleteDocument, restoreDocument } from '../write-service.js';

const Query = Type.Object({ hard: Type.Optional(Type.String({ description: 'true: purge (secret key only)' })) });

export default async function deleteRoutes(app: App, ctx: AppContext): Promise<void> {
  app.delete(
    '/api/data/:collectionName/:id',
    {
      schema: { tags: TAGS, summary: 'Delete a document (soft by default)', params: DocumentParams, querystring: Query },
    },
    async (req) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await writeAccess(ctx, req, col);
      const { id } = await deleteDocument(ctx, col, access, req.params.id, req.query.hard === 'true');
      return ok({ id, message: 'Document deleted' }, 'Document deleted');
    },
  );

  app.post(
    '/api/data/:collectionName/:id/restore',
    { schema: { tags: TAGS, summary: 'Restore a soft-deleted document', params: DocumentParams } },
    async (req) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await writeAccess(ctx, req, col);
      return ok(await restoreDocument(ctx, col, access, req.params.id), 'Document restored');
    },
  );
}
