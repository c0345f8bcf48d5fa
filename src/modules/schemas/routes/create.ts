/**
 * POST /api/schemas {name, fields:[{name, type (any case), required?, unique?, ref?, items?,
 * fields?}], indexes?: [{fields: [...]}]}: creates a collection with the secret key (403 with the publishable key).
 * Same rules as the dashboard route, including the plan's collection limit.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import { IndexList } from '../../collections/schemas.js';
import { createCollection } from '../../collections/service.js';
import { schemaView } from '../view.js';

const Body = Type.Object({
  name: Type.String({ maxLength: 200 }),
  fields: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 200 })),
  indexes: Type.Optional(IndexList),
});

export default async function createSchemaRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/schemas',
    {
      schema: { tags: ['schemas'], summary: 'Create a collection from a schema (secret key)', body: Body },
    },
    async (req, reply) => {
      const project = projectOf(req);
      const row = await createCollection(ctx, project.id, project.planName, { name: req.body.name, fields: req.body.fields ?? [], indexes: req.body.indexes });
      return reply.status(201).send(ok({ collection: schemaView(row) }, 'Schema created successfully'));
    },
  );
}
