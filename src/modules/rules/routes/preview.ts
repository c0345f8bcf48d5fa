/** POST /api/projects/:projectId/collections/:name/rules/preview: "test this rule as user X" (docs/rules.md). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadMemberProject } from '../../projects/access.js';
import { CollectionParams, envelopeOf } from '../../collections/schemas.js';
import { previewRule, PREVIEW_IDS_MAX } from '../preview-service.js';

const Action = Type.Union(
  [Type.Literal('list'), Type.Literal('view'), Type.Literal('create'), Type.Literal('update'), Type.Literal('delete')],
  { description: 'The action to try' },
);
const ObjectIdString = Type.String({ pattern: '^[0-9a-fA-F]{24}$' });
const Body = Type.Object(
  {
    action: Action,
    rule: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description: 'A candidate rule for the action (unsaved); absent: the saved rule' })),
    userId: Type.Optional(Type.Union([ObjectIdString, Type.Null()], { description: 'An end user of the project; absent or null: an anonymous caller' })),
    documentId: Type.Optional(ObjectIdString),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The incoming document (create) or change (update)' })),
  },
  { additionalProperties: false },
);
const Data = Type.Object({
  action: Type.String(),
  userId: Type.Union([Type.String(), Type.Null()]),
  rule: Type.Union([Type.String(), Type.Null()]),
  sql: Type.Union([Type.String(), Type.Null()]),
  allowed: Type.Boolean(),
  reason: Type.Union([Type.Literal('hidden'), Type.Literal('denied'), Type.Null()]),
  count: Type.Optional(Type.Integer()),
  ids: Type.Optional(Type.Array(Type.String(), { maxItems: PREVIEW_IDS_MAX })),
});

export default async function previewRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/projects/:projectId/collections/:name/rules/preview',
    {
      schema: {
        tags: ['dashboard: collections'],
        summary: 'Try a rule as an end user, under the real policies, rolled back',
        params: CollectionParams,
        body: Body,
        response: { 200: envelopeOf(Data) },
      },
    },
    async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(await previewRule(ctx, project.id, req.params.name, req.body));
    },
  );
}
