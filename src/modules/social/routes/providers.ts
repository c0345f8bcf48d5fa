/**
 * PATCH /api/projects/:projectId/auth/providers (docs/wire-compatibility.md §10.6): enable/disable GitHub and
 * Google and set their client id and secret. The secret is AES-256-GCM encrypted into
 * `projects.secrets` and never returned (`hasClientSecret`); every API node drops its cached
 * copy of the project at once (bus `project_changed`).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { encrypt, type Encrypted } from '../../../lib/crypto.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import { loadMemberProject } from '../../projects/access.js';
import { SocialErrors } from '../errors.js';
import { saveProviderSettings } from '../queries.js';
import { PROVIDERS, providerLabel, providerSettings, secretName, type ProviderName, type ProviderSetting } from '../providers.js';

const ProviderPatch = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    clientId: Type.Optional(Type.String({ maxLength: 512 })),
    clientSecret: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);
const Body = Type.Object(
  { github: Type.Optional(ProviderPatch), google: Type.Optional(ProviderPatch) },
  { additionalProperties: false },
);
type Patch = Static<typeof ProviderPatch>;

function merge(current: ProviderSetting, patch: Patch): ProviderSetting {
  return { enabled: patch.enabled ?? current.enabled, clientId: (patch.clientId ?? current.clientId).trim() };
}

function checkEnable(p: ProviderName, next: ProviderSetting, hasSecret: boolean, siteUrl: string | null): void {
  if (!next.enabled) return;
  if (!next.clientId || !hasSecret) {
    throw SocialErrors.provider_incomplete(`${p} requires clientId and clientSecret before it can be enabled.`);
  }
  if (!siteUrl) {
    throw SocialErrors.provider_site_url(`You must configure a Site URL in Project Settings before enabling ${providerLabel(p)} OAuth.`);
  }
}

export default async function socialSettingsRoutes(app: App, ctx: AppContext): Promise<void> {
  app.patch('/api/projects/:projectId/auth/providers', {
    schema: {
      tags: ['projects'],
      summary: 'Configure social sign-in providers (client secret write-only)',
      params: Type.Object({ projectId: Type.String() }),
      body: Body,
    },
    handler: async (req) => {
      const row = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      if (!PROVIDERS.some((p) => req.body[p] !== undefined)) throw SocialErrors.providers_empty();
      const all: Record<string, ProviderSetting> = {};
      const secrets: Record<string, Encrypted> = {};
      const hasSecret = (p: ProviderName) => !!(secrets[secretName(p)] ?? row.secrets[secretName(p)]);
      for (const p of PROVIDERS) {
        const patch = req.body[p];
        all[p] = patch ? merge(providerSettings(row.settings, p), patch) : providerSettings(row.settings, p);
        if (patch?.clientSecret !== undefined) {
          if (!patch.clientSecret.trim()) throw SocialErrors.client_secret_empty();
          secrets[secretName(p)] = encrypt(ctx.config.encryptionKey, patch.clientSecret.trim());
        }
        if (patch) checkEnable(p, all[p]!, hasSecret(p), row.site_url);
      }
      await saveProviderSettings(ctx.db.admin, row.id, all, secrets, ctx.clock.now());
      await ctx.bus.publish({ type: 'project_changed', id: row.id });
      const view = Object.fromEntries(PROVIDERS.map((p) => [p, { ...all[p], hasClientSecret: hasSecret(p) }]));
      return ok({ authProviders: view }, 'Auth providers updated');
    },
  });
}
