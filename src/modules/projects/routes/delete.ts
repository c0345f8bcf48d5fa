/** DELETE /api/projects/:projectId: the project and everything in it. */
import type { AppContext } from '../../../context.js';
import { done } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { MessageEnvelope } from '../../operators/schemas.js';
import { deleteProject } from '../service.js';
import { ProjectIdParams } from '../schemas.js';

export default async function deleteRoute(app: App, ctx: AppContext): Promise<void> {
  app.delete(
    '/api/projects/:projectId',
    {
      schema: {
        tags: ['dashboard: projects'],
        summary: 'Delete a project and all its data',
        params: ProjectIdParams,
        response: { 200: MessageEnvelope },
      },
    },
    async (req) => {
      await deleteProject(ctx, operatorOf(req), req.params.projectId);
      return done('Project and all associated resources deleted successfully');
    },
  );
}
