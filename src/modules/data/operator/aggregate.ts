/** GET /api/projects/:projectId/data/:collectionName/aggregate: the public aggregate, as the project owner. */
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { parseAggregateQuery } from '../aggregate-query.js';
import { aggregateDocuments } from '../aggregate-service.js';
import { AGGREGATE_DESCRIPTION } from '../routes/aggregate.js';
import { rawQuery } from '../target.js';
import { CollectionParams, operatorTarget, TAGS } from './target.js';

export default async function operatorAggregateRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/projects/:projectId/data/:collectionName/aggregate',
    {
      schema: { tags: TAGS, summary: 'Aggregate documents as the project owner', description: AGGREGATE_DESCRIPTION, params: CollectionParams },
    },
    async (req) => {
      const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
      return ok(await aggregateDocuments(ctx, t.col, t.access, parseAggregateQuery(rawQuery(req))), 'Aggregates computed successfully.');
    },
  );
}
