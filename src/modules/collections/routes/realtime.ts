/** PATCH /api/projects/:projectId/collections/:name/realtime: stream the collection's changes or not. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadMemberProject } from '../../projects/access.js';
import { CollectionParams, CollectionView, envelopeOf } from '../schemas.js';
import { setRealtime } from '../service.js';

const Body = Type.Object({ enabled: Type.Boolean({ description: 'true: every change is written to the change stream (docs/realtime.md)' }) }, { additionalProperties: false });

export default async function realtimeRoute(app: App, ctx: AppContext): Promise<void> {
  app.patch(
    '/api/projects/:projectId/collections/:name/realtime',
    {
      schema: {
        tags: ['dashboard: collections'],
        summary: 'Turn realtime (the change stream) on or off for a collection',
        params: CollectionParams,
        body: Body,
        response: { 200: envelopeOf(CollectionView) },
      },
    },
    async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(await setRealtime(ctx, project.id, req.params.name, req.body.enabled), req.body.enabled ? 'Realtime enabled' : 'Realtime disabled');
    },
  );
}
