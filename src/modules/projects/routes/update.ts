/** PATCH /api/projects/:projectId: settings (name, site URL, domains, auth flags, mail key and sender). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { envelopeOf } from '../../operators/schemas.js';
import { updateProjectSettings } from '../service.js';
import { ProjectIdParams, ProjectView } from '../schemas.js';

// Null first: with coerceTypes, a String branch tried first would turn null into "".
const MailKey = Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 200 })], { description: 're_… sets, null clears; never returned' }));
const FromEmail = Type.Optional(Type.String({ maxLength: 255, description: '"me@x.y" or "Name <me@x.y>"; "" clears' }));

const Body = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    siteUrl: Type.Optional(Type.String({ maxLength: 2048, description: '"" clears' })),
    allowedDomains: Type.Optional(Type.Array(Type.String({ maxLength: 253 }), { maxItems: 100 })),
    isAuthEnabled: Type.Optional(Type.Boolean()),
    requireEmailVerification: Type.Optional(Type.Boolean()),
    providerApiKey: MailKey,
    resendApiKey: MailKey,
    providerFromEmail: FromEmail,
    resendFromEmail: FromEmail,
    mfaPolicy: Type.Optional(Type.Union([Type.Literal('offer'), Type.Literal('require')], { description: "End users' second factor: offered (default) or required" })),
    allowSignup: Type.Optional(Type.Boolean({ description: 'New accounts by sign-up, passwordless sign-in or a guest linking an email (default true)' })),
    allowAnonymous: Type.Optional(Type.Boolean({ description: 'Guest (anonymous) sign-in (default false)' })),
    redirectUrls: Type.Optional(Type.Array(Type.String({ maxLength: 2048 }), {
      maxItems: 20,
      description: 'URLs besides siteUrl that sign-in links may open (a target must be one of them or below its path)',
    })),
    passkeys: Type.Optional(
      Type.Union([
        Type.Null(),
        Type.Object(
          {
            rpId: Type.String({ maxLength: 253, description: 'The relying party id: a host name (example.com)' }),
            origins: Type.Array(Type.String({ maxLength: 300 }), { maxItems: 20, description: 'Origins allowed to use passkeys (https://app.example.com)' }),
          },
          { additionalProperties: false },
        ),
      ], { description: 'WebAuthn settings of the end users; null clears' }),
    ),
  },
  { additionalProperties: false },
);

export default async function updateRoute(app: App, ctx: AppContext): Promise<void> {
  app.patch(
    '/api/projects/:projectId',
    {
      schema: {
        tags: ['dashboard: projects'],
        summary: 'Change project settings',
        params: ProjectIdParams,
        body: Body,
        response: { 200: envelopeOf(ProjectView) },
      },
    },
    async (req) => ok(await updateProjectSettings(ctx, operatorOf(req), req.params.projectId, req.body), 'Project updated'),
  );
}
