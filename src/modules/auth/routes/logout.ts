/** POST /api/userAuth/logout (docs/wire-compatibility.md §2.16): revokes the presented session, clears the cookie. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { clearRefreshCookie, presentedRefreshToken } from '../delivery.js';
import { revokePresented } from '../sessions.js';

export default async function logoutFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/logout', {
    schema: {
      tags: ['userAuth'],
      summary: 'Log out: revoke the presented refresh session (cookie or x-refresh-token) and clear the cookie',
      headers: Type.Object({ 'x-refresh-token': Type.Optional(Type.String()) }),
    },
    handler: async (req, reply) => {
      const { token } = presentedRefreshToken(req);
      if (token) await revokePresented(ctx, projectOf(req), token);
      clearRefreshCookie(ctx, reply);
      return reply.send(done('Logged out successfully'));
    },
  });
}
