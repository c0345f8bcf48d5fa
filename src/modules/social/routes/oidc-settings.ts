/**
 * The project's OpenID Connect providers (dashboard): GET the list and the presets, PUT one
 * provider by id (create or change), DELETE one. The client secret (Apple: the private key)
 * is write-only: encrypted at rest, shown as `hasClientSecret`.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { Preset } from '../oidc-config.js';
import { listOidcProviders, removeOidcProvider, setOidcProvider } from '../oidc-settings-service.js';

const Params = Type.Object({ projectId: Type.String(), providerId: Type.String({ maxLength: 40 }) });
/** oidc-config.ts PRESETS (the satisfies clause keeps the two lists in step one way; the other is the type of Body). */
const PresetName = Type.Union([
  Type.Literal('oidc'), Type.Literal('apple'), Type.Literal('microsoft'), Type.Literal('gitlab'), Type.Literal('discord'), Type.Literal('keycloak'),
]) satisfies { static: Preset };

const ProviderView = Type.Object({
  id: Type.String(),
  preset: PresetName,
  label: Type.String(),
  issuer: Type.String(),
  clientId: Type.String(),
  scopes: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  teamId: Type.Optional(Type.String()),
  keyId: Type.Optional(Type.String()),
  updatedAt: Type.String(),
  hasClientSecret: Type.Boolean(),
  redirectUri: Type.String({ description: 'Register this callback URL with the provider.' }),
});

const PresetView = Type.Object({
  preset: PresetName,
  label: Type.String(),
  defaultIssuer: Type.Union([Type.String(), Type.Null()]),
  issuerHint: Type.String(),
  scopes: Type.Array(Type.String()),
  oidc: Type.Boolean(),
  formPost: Type.Boolean(),
  keySecret: Type.Boolean(),
});

const Body = Type.Object(
  {
    preset: PresetName,
    label: Type.Optional(Type.String({ maxLength: 60 })),
    issuer: Type.Optional(Type.String({ maxLength: 2048, description: "The issuer URL; the preset's when omitted (Apple, GitLab, Discord)." })),
    clientId: Type.Optional(Type.String({ maxLength: 512 })),
    clientSecret: Type.Optional(Type.String({ maxLength: 8192, description: 'Write-only. Apple: the .p8 private key (PEM).' })),
    scopes: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 })),
    enabled: Type.Optional(Type.Boolean()),
    teamId: Type.Optional(Type.String({ maxLength: 64, description: 'Apple: the team id.' })),
    keyId: Type.Optional(Type.String({ maxLength: 64, description: "Apple: the private key's id." })),
  },
  { additionalProperties: false },
);

const envelope = <T extends ReturnType<typeof Type.Object>>(data: T) =>
  Type.Object({ success: Type.Boolean(), data, message: Type.String() });

export default async function oidcSettingsRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/projects/:projectId/auth/oidc', {
    schema: {
      tags: ['projects'],
      summary: "The project's OpenID Connect providers and the presets",
      params: Type.Object({ projectId: Type.String() }),
      response: { 200: envelope(Type.Object({ providers: Type.Array(ProviderView), presets: Type.Array(PresetView) })) },
    },
    handler: async (req) => ok(await listOidcProviders(ctx, operatorOf(req), req.params.projectId), 'OpenID Connect providers'),
  });

  app.put('/api/projects/:projectId/auth/oidc/:providerId', {
    schema: {
      tags: ['projects'],
      summary: 'Create or change one OpenID Connect provider (client secret write-only; enabling checks discovery)',
      params: Params,
      body: Body,
      response: { 200: envelope(ProviderView) },
    },
    handler: async (req) => ok(await setOidcProvider(ctx, operatorOf(req), req.params.projectId, req.params.providerId, req.body), 'OpenID Connect provider saved'),
  });

  app.delete('/api/projects/:projectId/auth/oidc/:providerId', {
    schema: { tags: ['projects'], summary: 'Delete one OpenID Connect provider and its secret', params: Params },
    handler: async (req) => {
      await removeOidcProvider(ctx, operatorOf(req), req.params.projectId, req.params.providerId);
      return ok(null, 'OpenID Connect provider deleted');
    },
  });
}
