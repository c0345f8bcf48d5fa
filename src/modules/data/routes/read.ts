/** GET /api/data/:collectionName (list or count) and GET /api/data/:collectionName/:id. */
import type { AppContext } from '../../../context.js';
import { JSON_CONTENT_TYPE, ok, okJson } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { readAccess } from '../access.js';
import { parseListQuery } from '../query.js';
import { asWritten, countDocuments, getDocumentJson, getDocumentTagged, listDocuments, listDocumentsJson } from '../read-service.js';
import { CollectionParam, DocumentParams, loadTarget, rawQuery, TAGS } from '../target.js';
import { IfNoneMatchHeaders, noneMatchHit } from '../etag.js';
import { appendVary } from '../../../plugins/cors.js';

export default async function readRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/data/:collectionName',
    {
      schema: {
        tags: TAGS,
        summary: 'List documents (filters, sort, page/limit/skip, cursor, count=true, fields, populate)',
        description:
          'Filters: `field=value`, `field_gt|_gte|_lt|_lte|_ne|_in|_exists|_regex=value`, dotted paths allowed. ' +
          'Paging: `page`, `limit` (20, max 100), `skip`, `cursor` (keyset; answer has `nextCursor`). ' +
          '`sort=-field` or `field:asc|desc`. `include_deleted=true`. `count=true` → `{count}`. ' +
          '`total` is exact on an offset page that reaches the end of the matches, else null unless `include_total=true` ' +
          '(which counts every match: slow on large collections).',
        params: CollectionParam,
      },
    },
    async (req, reply) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const q = parseListQuery(rawQuery(req));
      const access = await readAccess(ctx, req, col, { populate: q.populate.length > 0 });
      if (q.count) return ok({ count: await countDocuments(ctx, col, access, q) }, 'Count fetched successfully.');
      if (!asWritten(q)) return ok(await listDocuments(ctx, col, access, q), 'Data fetched successfully');
      return reply.type(JSON_CONTENT_TYPE).send(okJson(await listDocumentsJson(ctx, col, access, q), 'Data fetched successfully'));
    },
  );

  app.get(
    '/api/data/:collectionName/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Get one document (fields, meta=false, populate, include_deleted)',
        description:
          'Answers the document\'s `ETag` (strong; changes with every write of it): send it back in `If-Match` to write only that ' +
          'version, or in `If-None-Match` to get 304 Not Modified while it is unchanged (docs/data.md "Conditional writes").',
        params: DocumentParams,
        headers: IfNoneMatchHeaders,
      },
    },
    async (req, reply) => {
      const col = await loadTarget(ctx, req, req.params.collectionName);
      const q = parseListQuery(rawQuery(req));
      const access = await readAccess(ctx, req, col, { populate: q.populate.length > 0 });
      const { etag, doc, json } = asWritten(q)
        ? { ...(await getDocumentJson(ctx, col, access, req.params.id, q)), doc: undefined }
        : { ...(await getDocumentTagged(ctx, col, access, req.params.id, q)), json: undefined };
      // The caller's token decides which fields it sees (hidden fields, docs/rules.md): a cache
      // must not answer one user's revalidation with another's copy.
      appendVary(reply, 'Authorization');
      reply.header('etag', etag);
      const condition = req.headers['if-none-match'];
      if (condition !== undefined && q.populate.length === 0 && noneMatchHit(condition, etag)) return reply.code(304).send();
      if (json === undefined) return ok(doc, 'Data fetched successfully');
      return reply.type(JSON_CONTENT_TYPE).send(okJson(json, 'Data fetched successfully'));
    },
  );
}
