/**
 * GET /api/projects/:projectId/data/:collectionName (list or count) and GET …/:id, for the
 * dashboard: the public API's query grammar, parsed by the same parser, and the same `total` rule
 * (null unless the page shows it or `include_total=true`): the console asks for `count=true`.
 */
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { parseListQuery } from '../query.js';
import { countDocuments, getDocument, listDocuments } from '../read-service.js';
import { rawQuery } from '../target.js';
import { CollectionParams, DocumentParams, operatorTarget, TAGS } from './target.js';

export default async function operatorReadRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/projects/:projectId/data/:collectionName',
    {
      schema: {
        tags: TAGS,
        summary: 'List documents as the project owner (the /api/data query grammar; total null unless shown by the page or include_total=true)',
        params: CollectionParams,
      },
    },
    async (req) => {
      const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
      const q = parseListQuery(rawQuery(req));
      if (q.count) return ok({ count: await countDocuments(ctx, t.col, t.access, q) }, 'Count fetched successfully.');
      return ok(await listDocuments(ctx, t.col, t.access, q), 'Data fetched successfully');
    },
  );

  app.get(
    '/api/projects/:projectId/data/:collectionName/:id',
    {
      schema: { tags: TAGS, summary: 'Get one document as the project owner (include_deleted=true sees soft-deleted ones)', params: DocumentParams },
    },
    async (req) => {
      const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
      const doc = await getDocument(ctx, t.col, t.access, req.params.id, parseListQuery(rawQuery(req)));
      return ok(doc, 'Data fetched successfully');
    },
  );
}
