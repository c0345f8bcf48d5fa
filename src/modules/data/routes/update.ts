/** PUT and PATCH /api/data/:collectionName/:id: the same merge (dot notation sets inner keys). */
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import { IdempotencyHeaders, keyedRequest, sendAnswer } from '../../idempotency/http.js';
import { writeAccess } from '../access.js';
import { updateOnce } from '../keyed-service.js';
import { AnyBody, DocumentParams, loadTarget, TAGS } from '../target.js';
import { updateDocument } from '../write-service.js';
import { Type } from '@sinclair/typebox';
import { IfMatchHeader, parseIfMatch } from '../etag.js';
import { tagged, taggedAnswer } from './written.js';

const Headers = Type.Object({ ...IdempotencyHeaders.properties, ...IfMatchHeader });

export default async function updateRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/data/:collectionName/:id',
      schema: {
        tags: TAGS,
        summary: `Update a document (${method}: merge of the given keys)`,
        description: 'Answers the new version\'s `ETag`; with `If-Match`, writes only over the version it names (else 412 `precondition_failed`).',
        params: DocumentParams,
        headers: Headers,
        body: AnyBody,
      },
      handler: async (req, reply) => {
        const col = await loadTarget(ctx, req, req.params.collectionName);
        const access = await writeAccess(ctx, req, col);
        const limit = projectOf(req).plan.databaseBytes;
        const ifMatch = parseIfMatch(req.headers['if-match'], req.params.id);
        const keyed = keyedRequest(req, access.userId);
        const respond = (doc: unknown) => ({ status: 200, body: ok(doc, 'Updated') });
        if (keyed) return sendAnswer(reply, taggedAnswer(reply, await updateOnce(ctx, col, access, req.params.id, req.body, limit, { keyed, respond }, ifMatch)));
        return tagged(reply, respond(await updateDocument(ctx, col, access, req.params.id, req.body, limit, ifMatch)).body);
      },
    });
  }
}
