/** POST /api/projects/:projectId/ai/schema-suggest: a description → a validated collection schema. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { MAX_DESCRIPTION, suggestSchema } from '../schema-suggest.js';
import { aiFeatureOptions, envelope, ownedProject } from './common.js';

const Body = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: MAX_DESCRIPTION, description: 'What the collection holds, in plain language' }),
    collectionName: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Use this name instead of letting the model choose' })),
  },
  { additionalProperties: false },
);

const Field = Type.Recursive((Self) =>
  Type.Object({
    key: Type.String(),
    type: Type.String(),
    required: Type.Optional(Type.Boolean()),
    unique: Type.Optional(Type.Boolean()),
    default: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
    ref: Type.Optional(Type.String()),
    items: Type.Optional(Type.Object({ type: Type.String(), fields: Type.Optional(Type.Array(Self)) })),
    fields: Type.Optional(Type.Array(Self)),
  }),
);

const Result = envelope(
  Type.Object({
    collectionName: Type.String(),
    schema: Type.Array(Field, { description: 'Field definitions (docs/wire-compatibility.md §4.2), ready for POST /api/projects/:projectId/collections' }),
    explanation: Type.String(),
  }),
);

export default async function schemaSuggestRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/projects/:projectId/ai/schema-suggest',
    aiFeatureOptions(ctx, 'Suggest a collection schema from a description in plain language (one AI session)', Body, Result),
    async (req) => {
      const project = await ownedProject(ctx, req);
      const suggestion = await suggestSchema(ctx, project, req.body.description, req.body.collectionName);
      return ok(suggestion, 'Schema suggested.');
    },
  );
}
