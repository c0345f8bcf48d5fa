/** PUT /api/user/me/byok: set or clear the signed-in operator's account AI key. */
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { setAccountKey } from '../keys.js';
import { AiKeyBody, KeyState, keyMessage } from './common.js';

export default async function setAccountKeyRoute(app: App, ctx: AppContext): Promise<void> {
  app.put(
    '/api/user/me/byok',
    {
      schema: {
        tags: ['ai'],
        summary: 'Set or clear your account AI key (used for all your projects without their own key)',
        body: AiKeyBody,
        response: { 200: KeyState },
      },
    },
    async (req) => {
      const state = await setAccountKey(ctx, operatorOf(req), req.body.aiKey as string | null);
      return ok(state, keyMessage(state.hasAiKey));
    },
  );
}
