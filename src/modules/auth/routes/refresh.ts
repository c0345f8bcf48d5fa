/**
 * POST /api/userAuth/refresh-token (docs/wire-compatibility.md §2.15): rotates the refresh token from the cookie
 * or the `x-refresh-token` header. Every failure clears the cookie, except a token of another
 * project (which must not log the caller out of this one).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { AppError } from '../../../lib/errors.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { AuthErrors } from '../errors.js';
import { clearRefreshCookie, clientMeta, deliverTokens, headerMode, presentedRefreshToken } from '../delivery.js';
import { refreshLimit } from '../limits.js';
import { rotate } from '../sessions.js';

export default async function refreshFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/refresh-token', {
    schema: {
      tags: ['userAuth'],
      summary: 'Rotate the refresh token (cookie or x-refresh-token header) and get a new access token',
      headers: Type.Object({
        'x-refresh-token': Type.Optional(Type.String()),
        'x-refresh-token-mode': Type.Optional(Type.String()),
      }),
    },
    handler: async (req, reply) => {
      const project = projectOf(req);
      await refreshLimit(ctx, project.id, req.ip);
      const { token, fromHeader } = presentedRefreshToken(req);
      try {
        if (!token) throw AuthErrors.refresh_missing();
        const tokens = await rotate(ctx, project, token, clientMeta(req));
        const data = deliverTokens(ctx, reply, tokens, fromHeader || headerMode(req));
        return reply.send(ok(data, 'Token refreshed successfully'));
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'refresh_wrong_project')) clearRefreshCookie(ctx, reply);
        throw err;
      }
    },
  });
}
