/** PUT /api/projects/:projectId/byok: set or clear a project's AI key (project owner). */
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { setProjectKey } from '../keys.js';
import { AiKeyBody, KeyState, keyMessage, ProjectParams } from './common.js';

export default async function setProjectKeyRoute(app: App, ctx: AppContext): Promise<void> {
  app.put(
    '/api/projects/:projectId/byok',
    {
      schema: {
        tags: ['ai'],
        summary: "Set or clear a project's AI key (overrides the account key for this project)",
        params: ProjectParams,
        body: AiKeyBody,
        response: { 200: KeyState },
      },
    },
    async (req) => {
      const state = await setProjectKey(ctx, operatorOf(req), req.params.projectId, req.body.aiKey as string | null);
      return ok(state, keyMessage(state.hasAiKey));
    },
  );
}
