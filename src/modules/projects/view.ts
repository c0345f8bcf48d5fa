/**
 * What the dashboard may see of a project. Key hashes, the JWT secret and every encrypted
 * blob stay behind; each secret shows only as a `has…` flag. The `users` collection's model
 * omits its password field.
 */
import { METRICS } from '../../lib/quota-queries.js';
import type { Encrypted } from '../../lib/crypto.js';
import { planOf, type PlanName } from '../plans/plans.js';
import type { CollectionRow, ProjectRow } from './queries.js';

/** Usage counter metrics (usage_counters.metric, period '') the storage and data domains keep. */
export const USAGE_METRICS = { storage: METRICS.storageBytes, database: METRICS.dbBytes } as const;

export interface Metrics {
  database: { used: number; limit: number };
  storage: { used: number; limit: number };
}

export function metricsOf(planName: PlanName, used: { storage: number; database: number }): Metrics {
  const plan = planOf(planName);
  return { database: { used: used.database, limit: plan.databaseBytes }, storage: { used: used.storage, limit: plan.storageBytes } };
}

const iso = (v: unknown) => new Date(v as Date).toISOString();
const SECRET_LIKE = /secret|password|token|credential/i;

function providerView(settings: Record<string, unknown>, secrets: Record<string, Encrypted>, name: 'github' | 'google') {
  const providers = (settings.authProviders ?? {}) as Record<string, { enabled?: boolean; clientId?: string } | undefined>;
  const p = providers[name] ?? {};
  return { enabled: p.enabled === true, clientId: p.clientId ?? '', hasClientSecret: !!secrets[`${name}ClientSecret`] };
}

function storageView(settings: Record<string, unknown>, secrets: Record<string, Encrypted>) {
  const raw = (settings.storage ?? {}) as Record<string, unknown>;
  // Secrets belong in projects.secrets; drop anything secret-looking that slipped into settings.
  const visible = Object.fromEntries(Object.entries(raw).filter(([k]) => !SECRET_LIKE.test(k)));
  return { ...visible, hasSecretAccessKey: !!secrets.storageSecretAccessKey };
}

export function collectionView(c: CollectionRow) {
  const model = c.name.toLowerCase() === 'users' ? c.fields.filter((f) => f.key !== 'password') : c.fields;
  return { _id: c.id, name: c.name, model, rls: c.rls, schemaVersion: c.schema_version, createdAt: iso(c.created_at), updatedAt: iso(c.updated_at) };
}

/** The list entry (GET /api/projects). */
export function projectSummary(p: ProjectRow, collectionsCount: number, metrics: Metrics) {
  return {
    _id: p.id,
    name: p.name,
    description: p.description,
    siteUrl: p.site_url,
    isAuthEnabled: p.settings.isAuthEnabled === true,
    collectionsCount,
    metrics,
    databaseUsed: metrics.database.used,
    databaseLimit: metrics.database.limit,
    storageUsed: metrics.storage.used,
    storageLimit: metrics.storage.limit,
    createdAt: iso(p.created_at),
    updatedAt: iso(p.updated_at),
  };
}

function passkeysView(settings: Record<string, unknown>) {
  const raw = (settings.passkeys ?? {}) as { rpId?: unknown; origins?: unknown };
  return { rpId: typeof raw.rpId === 'string' ? raw.rpId : null, origins: Array.isArray(raw.origins) ? (raw.origins as string[]) : [] };
}

/** The full sanitised project (GET/PATCH /api/projects/:id). */
export function projectView(p: ProjectRow, planName: PlanName, collections: CollectionRow[], metrics: Metrics) {
  const s = p.settings;
  const hasMailKey = !!p.secrets.mailApiKey;
  const from = typeof s.providerFromEmail === 'string' ? s.providerFromEmail : '';
  return {
    ...projectSummary(p, collections.length, metrics),
    owner: p.owner_id,
    plan: planName,
    requireEmailVerification: s.requireEmailVerification === true,
    mfa: { policy: (s.mfa as { policy?: string } | undefined)?.policy === 'require' ? ('require' as const) : ('offer' as const) },
    passkeys: passkeysView(s),
    signIn: {
      allowSignup: s.allowSignup !== false,
      allowAnonymous: s.allowAnonymous === true,
      redirectUrls: Array.isArray(s.redirectUrls) ? (s.redirectUrls as string[]) : [],
    },
    allowedDomains: Array.isArray(s.allowedDomains) ? (s.allowedDomains as string[]) : ['*'],
    providerFromEmail: from,
    resendFromEmail: from,
    hasProviderApiKey: hasMailKey,
    hasResendApiKey: hasMailKey,
    hasMailWebhookSecret: !!p.secrets.mailWebhookSecret,
    hasAiKey: !!p.secrets.aiKey,
    authProviders: { github: providerView(s, p.secrets, 'github'), google: providerView(s, p.secrets, 'google') },
    storage: storageView(s, p.secrets),
    collections: collections.map(collectionView),
  };
}
