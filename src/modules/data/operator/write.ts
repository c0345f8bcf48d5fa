/**
 * Dashboard writes on documents: create, bulk create, merge update, soft/hard delete,
 * restore, and bulk delete/restore of selected ids. The public API's write services with the
 * secret key's access (see ./target.ts).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { AnyBody } from '../target.js';
import { createDocument, createMany, deleteDocument, restoreDocument, updateDocument } from '../write-service.js';
import { bulkDelete, bulkRestore } from './bulk.js';
import { CollectionParams, DocumentParams, operatorTarget, TAGS } from './target.js';

const HardQuery = Type.Object({ hard: Type.Optional(Type.String({ description: 'true: purge and free the bytes' })) });
const Ids = Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 100 });
const BulkDeleteBody = Type.Object({ ids: Ids, hard: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
const BulkRestoreBody = Type.Object({ ids: Ids }, { additionalProperties: false });

export default async function operatorWriteRoutes(app: App, ctx: AppContext): Promise<void> {
  const base = '/api/projects/:projectId/data/:collectionName';

  app.post(base, { schema: { tags: TAGS, summary: 'Create a document (201, the document)', params: CollectionParams, body: AnyBody } }, async (req, reply) => {
    const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
    const doc = await createDocument(ctx, t.col, t.access, req.body, t.databaseBytes);
    return reply.status(201).send(ok(doc, 'Document created'));
  });

  app.post(`${base}/bulk`, { schema: { tags: TAGS, summary: 'Create 1-100 documents in one statement (all or nothing)', params: CollectionParams, body: AnyBody } }, async (req, reply) => {
    const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
    return reply.status(201).send(ok(await createMany(ctx, t.col, t.access, req.body, t.databaseBytes), 'Bulk insert successful'));
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: `${base}/:id`,
      schema: { tags: TAGS, summary: `Update a document (${method}: merge of the given keys; dotted keys set inner keys)`, params: DocumentParams, body: AnyBody },
      handler: async (req) => {
        const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
        return ok(await updateDocument(ctx, t.col, t.access, req.params.id, req.body, t.databaseBytes), 'Updated');
      },
    });
  }

  app.delete(`${base}/:id`, { schema: { tags: TAGS, summary: 'Delete a document (soft; hard=true purges)', params: DocumentParams, querystring: HardQuery } }, async (req) => {
    const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
    const { id } = await deleteDocument(ctx, t.col, t.access, req.params.id, req.query.hard === 'true');
    return ok({ id, message: 'Document deleted' }, 'Document deleted');
  });

  app.post(`${base}/:id/restore`, { schema: { tags: TAGS, summary: 'Restore a soft-deleted document', params: DocumentParams } }, async (req) => {
    const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
    return ok(await restoreDocument(ctx, t.col, t.access, req.params.id), 'Document restored');
  });

  app.post(
    `${base}/bulk-delete`,
    { schema: { tags: TAGS, summary: 'Delete up to 100 documents by id (soft, or hard: true); a result per id', params: CollectionParams, body: BulkDeleteBody } },
    async (req) => {
      const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
      return ok(await bulkDelete(ctx, t, req.body.ids, req.body.hard === true), 'Bulk delete done');
    },
  );

  app.post(
    `${base}/bulk-restore`,
    { schema: { tags: TAGS, summary: 'Restore up to 100 soft-deleted documents by id; a result per id', params: CollectionParams, body: BulkRestoreBody } },
    async (req) => {
      const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
      return ok(await bulkRestore(ctx, t, req.body.ids), 'Bulk restore done');
    },
  );
}
