/**
 * A guest links a social or OpenID Connect identity to its own user id (../link.ts):
 * `POST /api/userAuth/social/:provider/link` answers the provider's URL for the app to open;
 * after the provider, the browser comes back to `<siteUrl>/auth/callback?link=…`, and the app
 * posts what it got to `POST /api/userAuth/social/:provider/link/finish`, both with the guest's
 * access token.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { authPreconditions, schemaOf } from '../../auth/schema.js';
import { userClaimsOf } from '../../auth/user-auth.js';
import { toUser } from '../../auth/users.js';
import { SocialErrors } from '../errors.js';
import { isProviderName } from '../providers.js';
import { beginLink, finishLink } from '../link.js';

const Params = Type.Object({ provider: Type.String({ maxLength: 40 }) });

const checkProvider = async (req: { params: unknown }) => {
  if (!isProviderName((req.params as { provider: string }).provider)) throw SocialErrors.unsupported_provider();
};

export default async function socialLinkFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/social/:provider/link', {
    schema: {
      tags: ['userAuth social'],
      summary: "A guest starts linking a provider identity to its own user id: {url} of the provider for the app to open; 409 user_not_anonymous for a user who is not a guest",
      params: Params,
    },
    preHandler: [checkProvider, authPreconditions(ctx)],
    handler: async (req) => {
      const url = await beginLink(ctx, projectOf(req), userClaimsOf(req), req.params.provider);
      return ok({ url }, 'Open this URL to link the identity');
    },
  });

  app.post('/api/userAuth/social/:provider/link/finish', {
    schema: {
      tags: ['userAuth social'],
      summary: 'Finish a link with what the provider sent to <siteUrl>/auth/callback?link=…: the same user, with the identity and its verified email, no longer anonymous',
      params: Params,
      body: Type.Object({
        state: Type.String({ maxLength: 512 }),
        code: Type.String({ maxLength: 2048 }),
        iss: Type.Optional(Type.String({ maxLength: 2048 })),
        user: Type.Optional(Type.String({ maxLength: 2048 })),
      }, { additionalProperties: false }),
    },
    preHandler: [checkProvider, authPreconditions(ctx)],
    handler: async (req) => {
      const params = new URLSearchParams({ state: req.body.state, code: req.body.code });
      if (req.body.iss) params.set('iss', req.body.iss);
      if (req.body.user) params.set('user', req.body.user);
      const { user, accessToken } = await finishLink(ctx, projectOf(req), userClaimsOf(req), req.params.provider, params);
      const data = { user: toUser(user, schemaOf(req)), ...(accessToken ? { accessToken, token: accessToken, expiresIn: ctx.config.userAccessTokenTtl.text } : {}) };
      return ok(data, 'Identity linked');
    },
  });
}
