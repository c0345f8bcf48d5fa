/**
 * The signed-in operator's own sessions (docs/operators-and-projects.md "Your sessions"): list
 * them, revoke one, or revoke every other, as end users do theirs (src/modules/auth/routes/own-sessions.ts).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import { operatorOf } from '../auth.js';
import { operatorSessions, revokeOperatorSession, revokeOtherOperatorSessions } from '../own-sessions.js';
import { envelopeOf } from '../schemas.js';

const TAGS = ['dashboard: auth'];
const Nullable = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

const Session = Type.Object({
  id: Type.String({ description: 'The session (its refresh family: the sid claim of its access tokens)' }),
  current: Type.Boolean({ description: 'The session of the token making this request' }),
  device: Nullable('Browser and system from the User-Agent, e.g. "Chrome 131 on Linux"'),
  userAgent: Nullable(),
  ip: Nullable('The address of its sign-in or last refresh'),
  aal: Type.String(),
  methods: Type.Array(Type.String(), { description: 'How it was signed in: pwd, otp, oauth, totp, passkey, recovery' }),
  signedInAt: Type.String(),
  lastUsedAt: Type.String({ description: 'Its sign-in or last refresh' }),
  expiresAt: Type.String(),
});

export default async function operatorSessionRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/auth/sessions', {
    config: { belowAal2: true },
    schema: {
      tags: TAGS,
      summary: "The operator's live sessions (device, address, last use), the current one flagged, most recently used first",
      response: { 200: envelopeOf(Type.Object({ sessions: Type.Array(Session) })) },
    },
    handler: async (req) => ok({ sessions: await operatorSessions(ctx, operatorOf(req)) }, 'Sessions fetched successfully'),
  });

  app.post('/api/auth/sessions/revoke-others', {
    schema: {
      tags: TAGS,
      summary: 'Revoke every session of the operator but this one (they end at their next request)',
      response: { 200: envelopeOf(Type.Object({ revoked: Type.Integer() })) },
    },
    handler: async (req) => {
      const revoked = await revokeOtherOperatorSessions(ctx, operatorOf(req));
      return ok({ revoked }, revoked === 1 ? '1 other session revoked' : `${revoked} other sessions revoked`);
    },
  });

  app.delete('/api/auth/sessions/:sessionId', {
    schema: {
      tags: TAGS,
      summary: 'Revoke one of your sessions, this one included (it ends at its next request); 404 when it is not yours',
      params: Type.Object({ sessionId: Type.String({ maxLength: 64 }) }),
    },
    handler: async (req) => {
      await revokeOperatorSession(ctx, operatorOf(req), req.params.sessionId);
      return done('Session revoked');
    },
  });
}
