/** DELETE /api/projects/:projectId/collections/:name: the collection, its documents and indexes. */
import type { AppContext } from '../../../context.js';
import { done } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadOwnedProject } from '../../projects/access.js';
import { CollectionParams } from '../schemas.js';
import { deleteCollection } from '../service.js';

export default async function deleteRoute(app: App, ctx: AppContext): Promise<void> {
  app.delete(
    '/api/projects/:projectId/collections/:name',
    {
      schema: { tags: ['dashboard: collections'], summary: 'Delete a collection and all its documents', params: CollectionParams },
    },
    async (req) => {
      const project = await loadOwnedProject(ctx, operatorOf(req), req.params.projectId);
      const name = await deleteCollection(ctx, project.id, req.params.name);
      return done(`Collection '${name}' deleted successfully.`);
    },
  );
}
