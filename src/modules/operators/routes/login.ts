/** POST /api/auth/login: a session as cookies and as a Bearer token in the body. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { limitAuthAttempts, withLoginFailureLimit } from '../limits.js';
import { AnyPassword, ChallengeEnvelope, Email, SessionEnvelope } from '../schemas.js';
import { ok } from '../../../lib/envelope.js';
import { login } from '../service.js';
import { sessionReply } from './reply.js';

const Body = Type.Object({ email: Email, password: AnyPassword });

export default async function loginRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/auth/login',
    { schema: { tags: ['dashboard: auth'], summary: 'Sign in as an operator', body: Body, response: { 200: Type.Union([SessionEnvelope, ChallengeEnvelope]) } } },
    async (req, reply) => {
      await limitAuthAttempts(ctx, req.ip);
      const outcome = await withLoginFailureLimit(ctx, req.body.email, () => login(ctx, req.body));
      // A second factor is due: no session, no cookies; POST /api/auth/mfa/verify completes it.
      if ('challenge' in outcome) return ok({ mfaRequired: true as const, ...outcome.challenge }, 'Second factor required');
      return sessionReply(ctx, req, reply, outcome, 'Login successful');
    },
  );
}
