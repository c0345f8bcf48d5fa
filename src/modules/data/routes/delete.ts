/**
 * DELETE /api/data/:collectionName/:id: soft delete (isDeleted, deletedAt); `?hard=true` with
 * the secret key purges and frees the bytes. POST …/:id/restore undoes a soft delete.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { IdempotencyHeaders, keyedRequest, sendAnswer } from '../../idempotency/http.js';
import { writeAccess } from '../access.js';
import { deleteOnce, restoreOnce } from '../keyed-service.js';
import { DocumentParams, loadTarget, TAGS } from '../target.js';
import { deleteDocument, restoreDocument } from '../write-service.js';

const Query = Type.Object({ hard: Type.Optional(Type.String({ description: 'true: purge (secret key only)' })) });

export default async function deleteRoutes(app: App, ctx: AppContext): Promise<void> {
  app.delete(
    '/api/data/:collectionName/:id',
    {
      schema: { tags: TAGS, summary: 'Delete a document (soft by default)', params: DocumentParams, headers: IdempotencyHeaders, querystring: Query },
    },
    async (req, reply) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await writeAccess(ctx, req, col);
      const hard = req.query.hard === 'true';
      const keyed = keyedRequest(req, access.userId);
      const respond = ({ id }: { id: string }) => ({ status: 200, body: ok({ id, message: 'Document deleted' }, 'Document deleted') });
      if (keyed) return sendAnswer(reply, await deleteOnce(ctx, col, access, req.params.id, hard, { keyed, respond }));
      return respond(await deleteDocument(ctx, col, access, req.params.id, hard)).body;
    },
  );

  app.post(
    '/api/data/:collectionName/:id/restore',
    { schema: { tags: TAGS, summary: 'Restore a soft-deleted document', params: DocumentParams, headers: IdempotencyHeaders } },
    async (req, reply) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await writeAccess(ctx, req, col);
      const keyed = keyedRequest(req, access.userId);
      const respond = (doc: unknown) => ({ status: 200, body: ok(doc, 'Document restored') });
      if (keyed) return sendAnswer(reply, await restoreOnce(ctx, col, access, req.params.id, { keyed, respond }));
      return respond(await restoreDocument(ctx, col, access, req.params.id)).body;
    },
  );
}
