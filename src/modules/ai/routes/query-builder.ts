/** POST /api/projects/:projectId/ai/query-builder: plain language → a validated list query. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { buildQuery, MAX_PROMPT } from '../query-builder.js';
import { aiFeatureOptions, envelope, ownedProject } from './common.js';

const Body = Type.Object(
  {
    collection: Type.String({ minLength: 1, maxLength: 64, description: 'Name of an existing collection' }),
    prompt: Type.String({ minLength: 1, maxLength: MAX_PROMPT, description: 'What to list, in plain language' }),
  },
  { additionalProperties: false },
);

const Result = envelope(
  Type.Object({
    query: Type.Object({
      filters: Type.Record(Type.String(), Type.String(), { description: 'Query parameters: field, field_gt, … field_regex' }),
      sort: Type.Union([Type.String(), Type.Null()]),
      limit: Type.Integer({ minimum: 1, maximum: 100 }),
    }),
    queryString: Type.String({ description: 'For GET /api/data/:collection?<queryString>' }),
    explanation: Type.String(),
  }),
);

export default async function queryBuilderRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/projects/:projectId/ai/query-builder',
    aiFeatureOptions(ctx, 'Build a /api/data list query from a request in plain language (one AI session)', Body, Result),
    async (req) => {
      const project = await ownedProject(ctx, req);
      const built = await buildQuery(ctx, project, req.body.collection, req.body.prompt);
      return ok(built, 'Query built.');
    },
  );
}
