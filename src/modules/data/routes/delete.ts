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
import { IfMatchHeader, parseIfMatch } from '../etag.js';
import { tagged, taggedAnswer } from './written.js';

const Headers = Type.Object({ ...IdempotencyHeaders.properties, ...IfMatchHeader });
const Query = Type.Object({ hard: Type.Optional(Type.String({ description: 'true: purge (secret key only)' })) });

export default async function deleteRoutes(app: App, ctx: AppContext): Promise<void> {
  app.delete(
    '/api/data/:collectionName/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete a document (soft by default)',
        description: 'With `If-Match`, deletes only the version it names (else 412 `precondition_failed`).',
        params: DocumentParams,
        headers: Headers,
        querystring: Query,
      },
    },
    async (req, reply) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await writeAccess(ctx, req, col);
      const hard = req.query.hard === 'true';
      const ifMatch = parseIfMatch(req.headers['if-match'], req.params.id);
      const keyed = keyedRequest(req, access.userId);
      const respond = ({ id }: { id: string }) => ({ status: 200, body: ok({ id, message: 'Document deleted' }, 'Document deleted') });
      if (keyed) return sendAnswer(reply, await deleteOnce(ctx, col, access, req.params.id, hard, { keyed, respond }, ifMatch));
      return respond(await deleteDocument(ctx, col, access, req.params.id, hard, ifMatch)).body;
    },
  );

  app.post(
    '/api/data/:collectionName/:id/restore',
    {
      schema: {
        tags: TAGS,
        summary: 'Restore a soft-deleted document',
        description: 'Answers the restored version\'s `ETag`; with `If-Match`, restores only the version it names (else 412 `precondition_failed`).',
        params: DocumentParams,
        headers: Headers,
      },
    },
    async (req, reply) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await writeAccess(ctx, req, col);
      const ifMatch = parseIfMatch(req.headers['if-match'], req.params.id);
      const keyed = keyedRequest(req, access.userId);
      const respond = (doc: unknown) => ({ status: 200, body: ok(doc, 'Document restored') });
      if (keyed) return sendAnswer(reply, taggedAnswer(reply, await restoreOnce(ctx, col, access, req.params.id, { keyed, respond }, ifMatch)));
      return tagged(reply, respond(await restoreDocument(ctx, col, access, req.params.id, ifMatch)).body);
    },
  );
}
