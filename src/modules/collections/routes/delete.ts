/** DELETE /api/projects/:projectId/collections/:name[?force=true]: the collection, its documents and indexes. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { done } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadMemberProject } from '../../projects/access.js';
import { CollectionParams } from '../schemas.js';
import { deleteCollection } from '../service.js';

export default async function deleteRoute(app: App, ctx: AppContext): Promise<void> {
  app.delete(
    '/api/projects/:projectId/collections/:name',
    {
      schema: {
        tags: ['dashboard: collections'],
        summary: 'Delete a collection and all its documents',
        description:
          "Refused with 409 collection_referenced_by_rules while other collections' access rules look it up, unless force=true: " +
          'then those rules are marked broken and deny everything until saved again (docs/rules.md).',
        params: CollectionParams,
        querystring: Type.Object({
          force: Type.Optional(Type.Boolean({ description: "Delete even though other collections' rules look it up (they are marked broken)" })),
        }),
      },
    },
    async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      const name = await deleteCollection(ctx, project.id, req.params.name, { force: req.query.force === true });
      return done(`Collection '${name}' deleted successfully.`);
    },
  );
}
