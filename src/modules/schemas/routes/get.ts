/** GET /api/schemas/:collectionName: the collection record, no secrets (SDK `schema.getSchema`). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import { SchemaErrors } from '../errors.js';
import { schemaView } from '../view.js';

const Params = Type.Object({ collectionName: Type.String({ maxLength: 200 }) });

export default async function getSchemaRoute(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/schemas/:collectionName',
    { schema: { tags: ['schemas'], summary: 'Get a collection schema', params: Params } },
    async (req) => {
      const name = req.params.collectionName;
      const col = await ctx.collections.get(projectOf(req).id, name);
      if (!col) throw SchemaErrors.schema_not_found();
      return ok({ collection: schemaView(col) }, 'Schema exists');
    },
  );
}
