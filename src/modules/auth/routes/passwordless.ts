/**
 * Passwordless sign-in by email (docs/auth.md "Passwordless by email"): `start` mails a magic
 * link and a 6-digit code and answers the same whatever the email; `verify` signs in with
 * either, with login's answer (or its MFA challenge when the user has a second factor).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { enrolmentDue } from '../../mfa/policy.js';
import { clientMeta, deliverTokens, headerMode } from '../delivery.js';
import { AuthErrors } from '../errors.js';
import { checkEmail, checkOtp } from '../inputs.js';
import { passwordlessCodeLimit, passwordlessSendLimit, passwordlessVerifyLimit } from '../limits.js';
import { startPasswordless, verifyEmailCode, verifyMagicLink } from '../passwordless.js';
import { schemaOf } from '../schema.js';
import { toUser } from '../users.js';

const StartBody = Type.Object(
  {
    email: Type.String({ maxLength: 320 }),
    redirectTo: Type.Optional(Type.String({
      maxLength: 2048,
      description: "The page the link opens: the project's site URL or a configured redirect URL, or a path below one (default <siteUrl>/auth/callback)",
    })),
    createUser: Type.Optional(Type.Boolean({ description: 'false: only an existing account may sign in (default true when the project allows sign-up)' })),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Custom users-schema fields of an account created by this sign-in' })),
  },
  { additionalProperties: false },
);

const VerifyBody = Type.Object(
  {
    token: Type.Optional(Type.String({ maxLength: 128, description: "The magic link's token (from the link's #fragment)" })),
    email: Type.Optional(Type.String({ maxLength: 320 })),
    code: Type.Optional(Type.String({ maxLength: 32, description: 'The 6-digit code of the mail, with email' })),
  },
  { additionalProperties: false, description: 'Either {token} or {email, code}' },
);

export default async function passwordlessFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/passwordless/start', {
    schema: {
      tags: ['userAuth'],
      summary: 'Mail a sign-in link and a 6-digit code (10 min, single use); the same answer whether or not the email has an account',
      body: StartBody,
    },
    handler: async (req) => {
      const project = projectOf(req);
      const email = checkEmail(req.body.email);
      await passwordlessSendLimit(ctx, project.id, req.ip, email);
      await startPasswordless(ctx, project, schemaOf(req), { ...req.body, email, acceptLanguage: req.headers['accept-language'] ?? null });
      return done('If this email can sign in, a link and a code have been sent.');
    },
  });

  app.post('/api/userAuth/passwordless/verify', {
    schema: {
      tags: ['userAuth'],
      summary: "Sign in with the link's token or the email and code: login's answer (or mfaRequired and a challenge)",
      headers: Type.Object({ 'x-refresh-token-mode': Type.Optional(Type.String()) }),
      body: VerifyBody,
    },
    handler: async (req, reply) => {
      const project = projectOf(req);
      const { token, email: rawEmail, code } = req.body;
      await passwordlessVerifyLimit(ctx, project.id, req.ip);
      let outcome;
      if (token !== undefined && rawEmail === undefined && code === undefined) {
        outcome = await verifyMagicLink(ctx, project, token, clientMeta(req));
      } else if (token === undefined && rawEmail !== undefined && code !== undefined) {
        const email = checkEmail(rawEmail);
        const otp = checkOtp(code);
        await passwordlessCodeLimit(ctx, project.id, email);
        outcome = await verifyEmailCode(ctx, project, email, otp, clientMeta(req));
      } else {
        throw AuthErrors.invalid_input('Send either token, or email and code.');
      }
      if (outcome.challenge) return reply.send(ok({ mfaRequired: true, ...outcome.challenge }, 'Second factor required'));
      const data = {
        user: toUser(outcome.user, schemaOf(req)),
        ...deliverTokens(ctx, reply, outcome.tokens, headerMode(req)),
        isNewUser: outcome.isNewUser,
        ...enrolmentDue(project),
      };
      return reply.send(ok(data, 'Login successful'));
    },
  });
}
