/** PATCH /api/projects/:projectId/collections/:name/rls (docs/wire-compatibility.md §10.5). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadMemberProject } from '../../projects/access.js';
import { CollectionParams, envelopeOf, RlsBody, RlsView } from '../schemas.js';
import { updateRls } from '../service.js';

const Data = Type.Object({ collection: Type.Object({ name: Type.String(), rls: RlsView }) });

export default async function rlsRoute(app: App, ctx: AppContext): Promise<void> {
  app.patch(
    '/api/projects/:projectId/collections/:name/rls',
    {
      schema: {
        tags: ['dashboard: collections'],
        summary: 'Change row-level security of a collection',
        params: CollectionParams,
        body: RlsBody,
        response: { 200: envelopeOf(Data) },
      },
    },
    async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      const collection = await updateRls(ctx, project.id, req.params.name, req.body);
      return ok({ collection }, 'Collection RLS updated');
    },
  );
}
