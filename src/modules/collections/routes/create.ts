/** POST /api/projects/:projectId/collections: a collection with its schema and RLS settings. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadMemberProject } from '../../projects/access.js';
import { CollectionErrors } from '../errors.js';
import { CollectionView, envelopeOf, FieldList, IndexList, ProjectParams, RlsBody, SearchLanguage } from '../schemas.js';
import { createCollection } from '../service.js';
import { collectionView } from '../view.js';

const Body = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 200 })),
  collectionName: Type.Optional(Type.String({ maxLength: 200, description: 'urBackend spelling of name' })),
  schema: Type.Optional(FieldList),
  fields: Type.Optional(FieldList),
  rls: Type.Optional(RlsBody),
  indexes: Type.Optional(IndexList),
  searchLanguage: Type.Optional(SearchLanguage),
  realtime: Type.Optional(Type.Boolean({ description: 'stream changes to realtime subscribers (docs/realtime.md)' })),
});

export default async function createRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/projects/:projectId/collections',
    {
      schema: {
        tags: ['dashboard: collections'],
        summary: 'Create a collection',
        params: ProjectParams,
        body: Body,
        response: { 201: envelopeOf(CollectionView) },
      },
    },
    async (req, reply) => {
      const operator = operatorOf(req);
      const project = await loadMemberProject(ctx, operator, req.params.projectId);
      const name = req.body.name ?? req.body.collectionName;
      if (name === undefined) throw CollectionErrors.invalid_collection_name("Field 'name' is required.");
      const row = await createCollection(ctx, project.id, operator.plan, {
        name,
        fields: req.body.schema ?? req.body.fields ?? [],
        rls: req.body.rls,
        indexes: req.body.indexes,
        searchLanguage: req.body.searchLanguage,
        realtime: req.body.realtime,
      });
      return reply.status(201).send(ok(collectionView(row), 'Collection created'));
    },
  );
}
