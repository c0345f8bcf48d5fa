/** POST /api/data/:collectionName (one document, 201 bare) and POST …/bulk (1-100, all or nothing). */
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import { writeAccess } from '../access.js';
import { AnyBody, CollectionParam, loadTarget, TAGS } from '../target.js';
import { createDocument, createMany } from '../write-service.js';

export default async function createRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/data/:collectionName',
    {
      schema: { tags: TAGS, summary: 'Create a document (returns the document itself, 201)', params: CollectionParam, body: AnyBody },
    },
    async (req, reply) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await writeAccess(ctx, req, col);
      const doc = await createDocument(ctx, col, access, req.body, projectOf(req).plan.databaseBytes);
      return reply.status(201).send(doc);
    },
  );

  app.post(
    '/api/data/:collectionName/bulk',
    {
      schema: { tags: TAGS, summary: 'Create 1-100 documents in one transaction', params: CollectionParam, body: AnyBody },
    },
    async (req, reply) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await writeAccess(ctx, req, col);
      const result = await createMany(ctx, col, access, req.body, projectOf(req).plan.databaseBytes);
      return reply.status(201).send(ok(result, 'Bulk insert successful'));
    },
  );
}
