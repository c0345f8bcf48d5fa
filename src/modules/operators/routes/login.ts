/** POST /api/auth/login: a session as cookies and as a Bearer token in the body. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { limitAuthAttempts, withLoginFailureLimit } from '../limits.js';
import { AnyPassword, Email, SessionEnvelope } from '../schemas.js';
import { login } from '../service.js';
import { sessionReply } from './reply.js';

const Body = Type.Object({ email: Email, password: AnyPassword });

export default async function loginRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/auth/login',
    { schema: { tags: ['dashboard: auth'], summary: 'Sign in as an operator', body: Body, response: { 200: SessionEnvelope } } },
    async (req, reply) => {
      await limitAuthAttempts(ctx, req.ip);
      const session = await withLoginFailureLimit(ctx, req.body.email, () => login(ctx, req.body));
      return sessionReply(ctx, req, reply, session, 'Login successful');
    },
  );
}
