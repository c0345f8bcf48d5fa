/**
 * POST /api/userAuth/login (docs/wire-compatibility.md §2.5). Unknown email and wrong password get the same 401
 * after the same argon2 work; `requireEmailVerification` turns unverified logins away (403).
 * Failed logins are limited per account and per address (limits.ts). A user with a second
 * factor gets `{mfaRequired, challengeId, methods, expiresIn}` instead of tokens.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { AuthErrors } from '../errors.js';
import { clientMeta, deliverTokens, headerMode } from '../delivery.js';
import { loginLimit, withLoginFailureLimits } from '../limits.js';
import { schemaOf } from '../schema.js';
import { login } from '../service.js';
import { normalizeEmail } from '../../../lib/email.js';
import { toUser } from '../users.js';
import { IdentityErrors } from '../../../lib/identity/errors.js';
import { enrolmentDue } from '../../mfa/policy.js';

const Body = Type.Object({
  email: Type.String({ maxLength: 320 }),
  password: Type.String({ maxLength: 1024 }),
});

export default async function loginFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/login', {
    schema: {
      tags: ['userAuth'],
      summary: 'Log in with email and password (401 "Invalid email or password" for any bad credential)',
      headers: Type.Object({ 'x-refresh-token-mode': Type.Optional(Type.String()) }),
      body: Body,
    },
    handler: async (req, reply) => {
      const project = projectOf(req);
      const email = normalizeEmail(req.body.email);
      if (!email || !req.body.password) throw AuthErrors.invalid_input('Email and password are required.');
      await loginLimit(ctx, project.id, req.ip);
      const outcome = await withLoginFailureLimits(ctx, project.id, req.ip, email, async () => {
        if (req.body.password.length > 100) throw IdentityErrors.invalid_credentials();
        return login(ctx, project, email, req.body.password, clientMeta(req));
      });
      // A second factor is due: no tokens, no cookie; POST /api/userAuth/mfa/verify completes it.
      if (outcome.challenge) return reply.send(ok({ mfaRequired: true, ...outcome.challenge }, 'Second factor required'));
      const data = { user: toUser(outcome.user, schemaOf(req)), ...deliverTokens(ctx, reply, outcome.tokens, headerMode(req)), ...enrolmentDue(project) };
      return reply.send(ok(data, 'Login successful'));
    },
  });
}
