/** POST /api/userAuth/social/exchange: rtCode + access token → `data.refreshToken` (once, 60 s). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { authPreconditions } from '../../auth/schema.js';
import { SocialErrors } from '../errors.js';
import { exchange } from '../service.js';

export default async function socialExchangeFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/social/exchange', {
    schema: {
      tags: ['userAuth social'],
      summary: 'Exchange the one-time rtCode (with the access token from the fragment) for the refresh token',
      body: Type.Object({
        token: Type.Optional(Type.String({ maxLength: 4096 })),
        rtCode: Type.Optional(Type.String({ maxLength: 256 })),
      }),
    },
    preHandler: authPreconditions(ctx),
    handler: async (req) => {
      const { token, rtCode } = req.body;
      if (!token || !rtCode) throw SocialErrors.exchange_missing();
      const refreshToken = await exchange(ctx, projectOf(req), token, rtCode);
      return ok({ refreshToken }, 'Refresh token exchanged successfully');
    },
  });
}
