/**
 * The signed-in operator's linked sign-in accounts (GitHub): list them, link GitHub, unlink
 * one (docs/operators-and-projects.md "GitHub sign-in").
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import { operatorOf, requireAal2IfEnrolled } from '../auth.js';
import { beginOperatorGithub, GITHUB_PATH } from '../github.js';
import { setBrowserCookie } from '../../social/cookie.js';
import { listOperatorIdentities, unlinkIdentity } from '../identities.js';
import { envelopeOf } from '../schemas.js';

const TAGS = ['dashboard: auth'];

const Identity = Type.Object({
  provider: Type.Literal('github'),
  email: Type.Union([Type.String(), Type.Null()], { description: 'The address the provider gave at the last sign-in' }),
  linkedAt: Type.String(),
  lastSignInAt: Type.String(),
});

export default async function operatorIdentityRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/auth/identities', {
    config: { belowAal2: true },
    schema: {
      tags: TAGS,
      summary: "The accounts at sign-in providers linked to the operator's (GitHub)",
      response: { 200: envelopeOf(Type.Object({ identities: Type.Array(Identity) })) },
    },
    handler: async (req) => ok({ identities: await listOperatorIdentities(ctx, operatorOf(req)) }, 'Identities fetched successfully'),
  });

  app.post(`${GITHUB_PATH}/link`, {
    schema: {
      tags: TAGS,
      summary: 'Start linking GitHub to your account: the GitHub URL to send the browser to (a single-use state bound to it); back at the Account screen',
      response: { 200: envelopeOf(Type.Object({ url: Type.String() })) },
    },
    handler: async (req, reply) => {
      // A POST with the console's CSRF token, not a link: another site must not start a link to
      // whatever GitHub account its victim's browser is signed in to.
      const operator = operatorOf(req);
      requireAal2IfEnrolled(operator);
      const { url, state, browserKey } = await beginOperatorGithub(ctx, operator.id);
      setBrowserCookie(ctx, reply, state, browserKey, GITHUB_PATH);
      return ok({ url }, 'Continue at GitHub');
    },
  });

  app.delete('/api/auth/identities/:provider', {
    schema: {
      tags: TAGS,
      summary: 'Unlink a sign-in provider (signing in with it ends; sessions stay; the email still resets the password); 404 when none is linked',
      params: Type.Object({ provider: Type.Literal('github') }),
    },
    handler: async (req) => {
      await unlinkIdentity(ctx, operatorOf(req), req.params.provider);
      return done('GitHub unlinked');
    },
  });
}
