/** POST /api/userAuth/signup: creates an end user and starts a session (docs/wire-compatibility.md §2.4). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { clientMeta, deliverTokens, headerMode } from '../delivery.js';
import { checkEmail, checkNewPassword } from '../inputs.js';
import { signupLimit } from '../limits.js';
import { schemaOf } from '../schema.js';
import { signup } from '../service.js';
import { signupAllowed } from '../sign-in-settings.js';
import { AuthErrors } from '../errors.js';
import { toUser } from '../users.js';

const Body = Type.Object(
  {
    email: Type.String({ description: 'Valid email, at most 100 characters; stored lower-cased' }),
    password: Type.String({ description: '6 to 100 characters' }),
    name: Type.Optional(Type.String()),
    username: Type.Optional(Type.String({ description: '3 to 50 characters' })),
  },
  { additionalProperties: true, description: 'Any other field of the project users schema is validated against it' },
);

export default async function signupFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/signup', {
    schema: {
      tags: ['userAuth'],
      summary: 'Sign up an end user (201 with user, accessToken, expiresIn; refresh token as cookie / header mode)',
      headers: Type.Object({ 'x-refresh-token-mode': Type.Optional(Type.String()) }),
      body: Body,
    },
    handler: async (req, reply) => {
      const project = projectOf(req);
      if (!signupAllowed(project)) throw AuthErrors.signup_disabled();
      await signupLimit(ctx, project.id, req.ip);
      const email = checkEmail(req.body.email);
      const password = checkNewPassword(req.body.password);
      const schema = schemaOf(req);
      const { user, tokens } = await signup(ctx, project, schema, { email, password, body: req.body }, clientMeta(req));
      const data = { user: toUser(user, schema), ...deliverTokens(ctx, reply, tokens, headerMode(req)) };
      return reply.status(201).send(ok(data, 'User registered successfully'));
    },
  });
}
