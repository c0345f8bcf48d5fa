/**
 * The signed-in user's own sessions (docs/auth.md "Your own sessions"): list them, revoke one,
 * or revoke every other. Operators have the same for any user (project-users.ts).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { ownSessions, revokeOtherSessions, revokeOwnSession } from '../own-sessions.js';
import { userClaimsOf } from '../user-auth.js';

const Session = Type.Object({
  id: Type.String({ description: 'The session (its family id: the sid claim of its access tokens)' }),
  current: Type.Boolean({ description: 'The session of the token making this request' }),
  device: Type.Union([Type.String(), Type.Null()], { description: 'Browser and system from the User-Agent, e.g. "Chrome 131 on macOS"' }),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()], { description: 'The address of its last sign-in or refresh' }),
  aal: Type.String(),
  signedInAt: Type.String(),
  lastUsedAt: Type.String(),
  expiresAt: Type.String(),
});

export default async function ownSessionsFlow(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/userAuth/sessions', {
    schema: {
      tags: ['userAuth'],
      summary: "The signed-in user's live sessions (device, address, last use), most recently used first",
      response: { 200: Type.Object({ success: Type.Boolean(), data: Type.Object({ sessions: Type.Array(Session) }), message: Type.String() }) },
    },
    handler: async (req) => ok({ sessions: await ownSessions(ctx, projectOf(req), userClaimsOf(req)) }, 'Sessions fetched successfully'),
  });

  app.delete('/api/userAuth/sessions/others', {
    schema: { tags: ['userAuth'], summary: 'Revoke every session of the signed-in user except this one' },
    handler: async (req) => {
      const revoked = await revokeOtherSessions(ctx, projectOf(req), userClaimsOf(req));
      const message = 'Other sessions revoked';
      return ok({ message, revoked }, message);
    },
  });

  app.delete('/api/userAuth/sessions/:sessionId', {
    schema: {
      tags: ['userAuth'],
      summary: 'Revoke one of your sessions (404 when it is not yours)',
      params: Type.Object({ sessionId: Type.String({ maxLength: 64 }) }),
    },
    handler: async (req) => {
      await revokeOwnSession(ctx, projectOf(req), userClaimsOf(req), req.params.sessionId);
      return done('Session revoked successfully');
    },
  });
}
