/** POST /api/auth/register: creates a dashboard account (does not sign in). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { limitAuthAttempts } from '../limits.js';
import { Email, envelopeOf, NewPassword, OperatorUser } from '../schemas.js';
import { register, verificationRequired } from '../service.js';

const Body = Type.Object({ email: Email, password: NewPassword, name: Type.Optional(Type.String({ maxLength: 100 })) });

export default async function registerRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/auth/register',
    {
      schema: {
        tags: ['dashboard: auth'],
        summary: 'Register an operator account',
        body: Body,
        response: { 201: envelopeOf(Type.Object({ user: OperatorUser, verificationRequired: Type.Boolean() })) },
      },
    },
    async (req, reply) => {
      await limitAuthAttempts(ctx, req.ip);
      const user = await register(ctx, req.body);
      const needsOtp = verificationRequired(ctx);
      const message = needsOtp
        ? 'Registered successfully. Request a verification code with POST /api/auth/send-otp.'
        : 'Registered successfully';
      return reply.status(201).send(ok({ user, verificationRequired: needsOtp }, message));
    },
  );
}
