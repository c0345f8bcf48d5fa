/** POST /api/projects/:projectId/api-key: a new key of one kind; the old one fails at once. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { envelopeOf } from '../../operators/schemas.js';
import { rotateKey } from '../service.js';
import { ProjectIdParams, ProjectView } from '../schemas.js';

export default async function rotateKeyRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/projects/:projectId/api-key',
    {
      schema: {
        tags: ['dashboard: projects'],
        summary: 'Rotate one key; the old key stops working at once',
        params: ProjectIdParams,
        // Checked in the service, for the SDK's exact message (docs/wire-compatibility.md §10.3).
        body: Type.Object({ keyType: Type.String({ description: "'publishable' or 'secret'" }) }),
        response: { 200: envelopeOf(Type.Object({ apiKey: Type.String(), keyType: Type.String(), project: ProjectView })) },
      },
    },
    async (req) => ok(await rotateKey(ctx, operatorOf(req), req.params.projectId, req.body.keyType), 'API key regenerated. Store it now: it is not shown again.'),
  );
}
