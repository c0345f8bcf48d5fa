/** GET /api/data/:collectionName/aggregate: counts, sums, averages, extremes, grouped. */
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { readAccess } from '../access.js';
import { parseAggregateQuery } from '../aggregate-query.js';
import { aggregateDocuments } from '../aggregate-service.js';
import { CollectionParam, loadTarget, rawQuery, TAGS } from '../target.js';

export const AGGREGATE_DESCRIPTION =
  'Aggregates: `count` (or `count=*`), `countDistinct=f`, `sum=f`, `avg=f` (Number fields), `min=f`, `max=f` ' +
  '(Number, String, Date, createdAt, updatedAt); comma lists, at most 8 in all; `count` when none is given. ' +
  '`groupBy=a,b,c` (at most 3 declared top-level fields; Dates and timestamps as `createdAt:day|week|month|year|hour`, UTC). ' +
  '`sort=-count`, `sort=sum.price` or a grouped field; `limit` groups (100, max 1000; `truncated: true` when more matched). ' +
  'Filters and `include_deleted` as in the list. Answer: `{groups: [{key: {status: "paid"}, count: 3, sum: {price: 30}}], truncated}`. ' +
  'Same access as a list: private collections count only the signed-in user\'s documents.';

export default async function aggregateRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/data/:collectionName/aggregate',
    {
      schema: { tags: TAGS, summary: 'Aggregate documents (count, countDistinct, sum, avg, min, max; groupBy; filters)', description: AGGREGATE_DESCRIPTION, params: CollectionParam },
    },
    async (req) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const access = await readAccess(ctx, req, col);
      const q = parseAggregateQuery(rawQuery(req));
      return ok(await aggregateDocuments(ctx, col, access, q), 'Aggregates computed successfully.');
    },
  );
}
