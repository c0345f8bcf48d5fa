/**
 * Anonymous (guest) users (docs/auth.md "Anonymous users"): `POST /anonymous` signs a guest in
 * (the project must allow it; limited per address) with sign-up's answer; the guest then links
 * an email and password with `POST /anonymous/link-email`, keeping their user id and data.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { linkEmail, signInAnonymously } from '../anonymous.js';
import { clientMeta, deliverTokens, headerMode } from '../delivery.js';
import { checkEmail, checkNewPassword } from '../inputs.js';
import { anonymousLimit } from '../limits.js';
import { schemaOf } from '../schema.js';
import { userClaimsOf } from '../user-auth.js';
import { toUser } from '../users.js';

/** The guest sign-in (API key only). */
export async function anonymousSignInFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/anonymous', {
    schema: {
      tags: ['userAuth'],
      summary: 'Sign in as a guest: 201 with a new anonymous user (no email) and tokens (claim isAnonymous: true); 403 unless the project allows it',
      headers: Type.Object({ 'x-refresh-token-mode': Type.Optional(Type.String()) }),
    },
    handler: async (req, reply) => {
      const project = projectOf(req);
      await anonymousLimit(ctx, project.id, req.ip);
      const schema = schemaOf(req);
      const { user, tokens } = await signInAnonymously(ctx, project, schema, clientMeta(req));
      const data = { user: toUser(user, schema), ...deliverTokens(ctx, reply, tokens, headerMode(req)) };
      return reply.status(201).send(ok(data, 'Signed in as a guest'));
    },
  });
}

/** Linking an email and password to the signed-in guest (Bearer). */
export async function anonymousLinkFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/anonymous/link-email', {
    schema: {
      tags: ['userAuth'],
      summary: "Give the signed-in guest an email and password: same user id and data, no longer anonymous; 409 when the email is another user's",
      body: Type.Object({ email: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 1024 }) }, { additionalProperties: false }),
    },
    handler: async (req) => {
      const project = projectOf(req);
      const email = checkEmail(req.body.email);
      const password = checkNewPassword(req.body.password);
      const { user, accessToken } = await linkEmail(ctx, project, userClaimsOf(req), email, password);
      const data = { user: toUser(user, schemaOf(req)), ...(accessToken ? { accessToken, token: accessToken, expiresIn: ctx.config.userAccessTokenTtl.text } : {}) };
      return ok(data, 'Email linked; a verification code has been sent');
    },
  });
}
