/** TypeBox shapes of the project routes (they feed the OpenAPI document at /docs). */
import { Type } from '@sinclair/typebox';

export const ProjectIdParams = Type.Object({ projectId: Type.String({ description: '24-hex project id' }) });

const Usage = Type.Object({ used: Type.Number(), limit: Type.Number() });
const Provider = Type.Object({ enabled: Type.Boolean(), clientId: Type.String(), hasClientSecret: Type.Boolean() });

export const ProjectSummary = Type.Object({
  _id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  siteUrl: Type.Union([Type.String(), Type.Null()]),
  isAuthEnabled: Type.Boolean(),
  collectionsCount: Type.Integer(),
  metrics: Type.Object({ database: Usage, storage: Usage }),
  databaseUsed: Type.Number(),
  databaseLimit: Type.Number(),
  storageUsed: Type.Number(),
  storageLimit: Type.Number(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  /** The signed-in operator's role in the project (docs/teams.md). */
  role: Type.Optional(Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('developer'), Type.Literal('viewer')])),
});

export const ProjectView = Type.Composite([
  ProjectSummary,
  Type.Object({
    owner: Type.String(),
    plan: Type.String(),
    requireEmailVerification: Type.Boolean(),
    mfa: Type.Object({ policy: Type.Union([Type.Literal('offer'), Type.Literal('require')]) }),
    passkeys: Type.Object({ rpId: Type.Union([Type.String(), Type.Null()]), origins: Type.Array(Type.String()) }),
    signIn: Type.Object({ allowSignup: Type.Boolean(), allowAnonymous: Type.Boolean(), redirectUrls: Type.Array(Type.String()) }),
    allowedDomains: Type.Array(Type.String()),
    providerFromEmail: Type.String(),
    resendFromEmail: Type.String(),
    hasProviderApiKey: Type.Boolean(),
    hasResendApiKey: Type.Boolean(),
    hasMailWebhookSecret: Type.Boolean(),
    hasAiKey: Type.Boolean(),
    authProviders: Type.Object({ github: Provider, google: Provider }),
    storage: Type.Object({ hasSecretAccessKey: Type.Boolean() }, { additionalProperties: true }),
    collections: Type.Array(
      Type.Object({
        _id: Type.String(),
        name: Type.String(),
        model: Type.Array(Type.Object({}, { additionalProperties: true })),
        rls: Type.Object({}, { additionalProperties: true }),
        schemaVersion: Type.Integer(),
        createdAt: Type.String(),
        updatedAt: Type.String(),
      }),
    ),
  }),
]);

/** The create response: the view plus the raw keys, shown this once. */
export const CreatedProject = Type.Composite([ProjectView, Type.Object({ publishableKey: Type.String(), secretKey: Type.String() })]);
