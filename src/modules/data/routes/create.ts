/** POST /api/data/:collectionName (one document, 201 bare) and POST …/bulk (1-100, all or nothing). */
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import { IdempotencyHeaders, keyedRequest, sendAnswer } from '../../idempotency/http.js';
import { writeAccess } from '../access.js';
import { createManyOnce, createOnce } from '../keyed-service.js';
import { AnyBody, CollectionParam, loadTarget, TAGS } from '../target.js';
import { createDocument, createMany } from '../write-service.js';
import { tagDocument, taggedAnswer } from './written.js';

export default async function createRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/data/:collectionName',
    {
      schema: {
        tags: TAGS,
        summary: 'Create a document (returns the document itself, 201)',
        description: 'Answers the document\'s `ETag`, for a later `If-Match` (docs/data.md "Conditional writes").',
        params: CollectionParam,
        headers: IdempotencyHeaders,
        body: AnyBody,
      },
    },
    async (req, reply) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await writeAccess(ctx, req, col);
      const limit = projectOf(req).plan.databaseBytes;
      const keyed = keyedRequest(req, access.userId);
      if (keyed) return sendAnswer(reply, taggedAnswer(reply, await createOnce(ctx, col, access, req.body, limit, { keyed, respond: (doc) => ({ status: 201, body: doc }) }), true));
      const doc = await createDocument(ctx, col, access, req.body, limit);
      tagDocument(reply, doc);
      return reply.status(201).send(doc);
    },
  );

  app.post(
    '/api/data/:collectionName/bulk',
    {
      schema: { tags: TAGS, summary: 'Create 1-100 documents in one transaction', params: CollectionParam, headers: IdempotencyHeaders, body: AnyBody },
    },
    async (req, reply) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await writeAccess(ctx, req, col);
      const limit = projectOf(req).plan.databaseBytes;
      const keyed = keyedRequest(req, access.userId);
      const respond = (result: unknown) => ({ status: 201, body: ok(result, 'Bulk insert successful') });
      if (keyed) return sendAnswer(reply, await createManyOnce(ctx, col, access, req.body, limit, { keyed, respond }));
      return reply.status(201).send(respond(await createMany(ctx, col, access, req.body, limit)).body);
    },
  );
}
