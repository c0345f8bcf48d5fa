/**
 * PATCH /api/projects/:projectId/collections/:name: replace the schema (and, when given, the
 * compound indexes). The version goes up;
 * later writes are validated against it; existing documents are not rewritten.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadMemberProject } from '../../projects/access.js';
import { CollectionErrors } from '../errors.js';
import { CollectionParams, CollectionView, envelopeOf, FieldList, IndexList, SearchLanguage } from '../schemas.js';
import { updateSchema } from '../service.js';

const Body = Type.Object({
  schema: Type.Optional(FieldList),
  fields: Type.Optional(FieldList),
  indexes: Type.Optional(IndexList),
  searchLanguage: Type.Optional(SearchLanguage),
});

export default async function updateRoute(app: App, ctx: AppContext): Promise<void> {
  app.patch(
    '/api/projects/:projectId/collections/:name',
    {
      schema: {
        tags: ['dashboard: collections'],
        summary: 'Replace a collection schema (schema_version + 1)',
        params: CollectionParams,
        body: Body,
        response: { 200: envelopeOf(CollectionView) },
      },
    },
    async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      const fields = req.body.schema ?? req.body.fields;
      if (fields === undefined) throw CollectionErrors.invalid_schema("Field 'schema' is required.");
      return ok(await updateSchema(ctx, project.id, req.params.name, fields, req.body.indexes, req.body.searchLanguage), 'Collection schema updated');
    },
  );
}
