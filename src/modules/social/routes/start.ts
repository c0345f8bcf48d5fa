/**
 * GET /api/userAuth/social/:provider/start: the browser is sent here (publishable key in
 * `?key=` or `?x-api-key=`) and redirected to the provider with a fresh single-use state and
 * a PKCE challenge; the state is bound to this browser by a short-lived cookie (cookie.ts).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { SocialErrors } from '../errors.js';
import { isProviderName } from '../providers.js';
import { setBrowserCookie } from '../cookie.js';
import { begin } from '../service.js';
import { authPreconditions } from '../../auth/schema.js';

export default async function socialStartFlow(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/userAuth/social/:provider/start', {
    schema: {
      tags: ['userAuth social'],
      summary: "Start social sign-in: 302 to the provider (github, google or the id of one of the project's OpenID Connect providers)",
      params: Type.Object({ provider: Type.String({ maxLength: 40 }) }),
      querystring: Type.Object({ key: Type.Optional(Type.String()), 'x-api-key': Type.Optional(Type.String()) }),
    },
    preHandler: [
      async (req) => {
        if (!isProviderName((req.params as { provider: string }).provider)) throw SocialErrors.unsupported_provider();
      },
      authPreconditions(ctx),
    ],
    handler: async (req, reply) => {
      const provider = req.params.provider;
      if (!isProviderName(provider)) throw SocialErrors.unsupported_provider();
      const { url, state, browserKey } = await begin(ctx, projectOf(req), provider);
      setBrowserCookie(ctx, reply, state, browserKey);
      return reply.header('cache-control', 'no-store').redirect(url, 302);
    },
  });
}
