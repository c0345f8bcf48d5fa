/**
 * A project's OpenID Connect providers: any number, each named by an id the app uses in
 * `/api/userAuth/social/<id>/start`. Stored in `settings.oidcProviders.<id>` (what the
 * dashboard may see) and the client secret (Apple: the private key) AES-256-GCM encrypted
 * in `secrets["oidc:<id>"]`, never returned. Presets fill in what each provider needs.
 */
import type { AppContext } from '../../context.js';
import { decrypt } from '../../lib/crypto.js';
import type { ProjectRecord } from '../projects/cache.js';

export const PRESETS = ['oidc', 'apple', 'microsoft', 'gitlab', 'discord', 'keycloak'] as const;
export type Preset = (typeof PRESETS)[number];

export const OIDC_ID = /^[a-z][a-z0-9-]{0,39}$/;
/** Ids that name something else under /api/userAuth/social/. */
export const RESERVED_IDS: ReadonlySet<string> = new Set(['github', 'google', 'exchange', 'providers']);
export const MAX_OIDC_PROVIDERS = 20;

export interface PresetInfo {
  label: string;
  /** The issuer when the operator gives none (null: the operator must give it). */
  defaultIssuer: string | null;
  /** An example issuer, shown by the console. */
  issuerHint: string;
  scopes: string[];
  /** Speaks OpenID Connect (discovery, ID token); Discord is plain OAuth 2.0 with a profile API. */
  oidc: boolean;
  /** The provider posts the authorization response to the callback (Apple). */
  formPost: boolean;
  /** The secret is a private key from which a client-secret JWT is made (Apple). */
  keySecret: boolean;
}

const PRESET_INFO = new Map<Preset, PresetInfo>([
  ['oidc', { label: 'OpenID Connect', defaultIssuer: null, issuerHint: 'https://id.example.com', scopes: ['openid', 'email', 'profile'], oidc: true, formPost: false, keySecret: false }],
  ['apple', { label: 'Apple', defaultIssuer: 'https://appleid.apple.com', issuerHint: 'https://appleid.apple.com', scopes: ['openid', 'email', 'name'], oidc: true, formPost: true, keySecret: true }],
  ['microsoft', { label: 'Microsoft', defaultIssuer: null, issuerHint: 'https://login.microsoftonline.com/<tenant-id>/v2.0', scopes: ['openid', 'email', 'profile'], oidc: true, formPost: false, keySecret: false }],
  ['gitlab', { label: 'GitLab', defaultIssuer: 'https://gitlab.com', issuerHint: 'https://gitlab.com', scopes: ['openid', 'email', 'profile'], oidc: true, formPost: false, keySecret: false }],
  ['discord', { label: 'Discord', defaultIssuer: 'https://discord.com', issuerHint: 'https://discord.com', scopes: ['identify', 'email'], oidc: false, formPost: false, keySecret: false }],
  ['keycloak', { label: 'Keycloak', defaultIssuer: null, issuerHint: 'https://keycloak.example.com/realms/<realm>', scopes: ['openid', 'email', 'profile'], oidc: true, formPost: false, keySecret: false }],
]);

export const presetInfo = (p: Preset): PresetInfo => PRESET_INFO.get(p)!;
export const isPreset = (p: string): p is Preset => (PRESETS as readonly string[]).includes(p);
export const presetList = () => PRESETS.map((p) => ({ preset: p, ...presetInfo(p) }));

export interface OidcProviderSetting {
  id: string;
  preset: Preset;
  /** The button text (e.g. "Sign in with <label>"). */
  label: string;
  issuer: string;
  clientId: string;
  /** Scopes asked for; the preset's when empty. */
  scopes: string[];
  enabled: boolean;
  /** Apple: the team id and the key id of the private key (the key itself is the secret). */
  teamId?: string;
  keyId?: string;
  updatedAt: string;
}

export const oidcSecretName = (id: string) => `oidc:${id}`;

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function parseOne(id: string, raw: unknown): OidcProviderSetting | null {
  if (!raw || typeof raw !== 'object' || !OIDC_ID.test(id)) return null;
  const r = raw as Record<string, unknown>;
  const preset = str(r.preset);
  if (!isPreset(preset)) return null;
  return {
    id,
    preset,
    label: str(r.label) || presetInfo(preset).label,
    issuer: str(r.issuer),
    clientId: str(r.clientId),
    scopes: Array.isArray(r.scopes) ? r.scopes.filter((s): s is string => typeof s === 'string') : [],
    enabled: r.enabled === true,
    ...(typeof r.teamId === 'string' ? { teamId: r.teamId } : {}),
    ...(typeof r.keyId === 'string' ? { keyId: r.keyId } : {}),
    updatedAt: str(r.updatedAt),
  };
}

/** The project's providers by id (a Map: ids come from clients). */
export function oidcProviders(settings: Record<string, unknown>): Map<string, OidcProviderSetting> {
  const out = new Map<string, OidcProviderSetting>();
  const all = settings.oidcProviders;
  if (!all || typeof all !== 'object' || Array.isArray(all)) return out;
  for (const [id, raw] of Object.entries(all as Record<string, unknown>)) {
    const p = parseOne(id, raw);
    if (p) out.set(id, p);
  }
  return out;
}

/** What the dashboard sees of one provider: the settings and whether a secret is stored. */
export function oidcProviderView(p: OidcProviderSetting, secrets: Record<string, unknown>, publicUrl: string) {
  return {
    ...p,
    scopes: p.scopes.length ? p.scopes : presetInfo(p.preset).scopes,
    hasClientSecret: Object.hasOwn(secrets, oidcSecretName(p.id)) && !!secrets[oidcSecretName(p.id)],
    redirectUri: redirectUriOf(publicUrl, p.id),
  };
}

/** The callback the operator registers with the provider. */
export const redirectUriOf = (publicUrl: string, id: string) => `${publicUrl}/api/userAuth/social/${id}/callback`;

export interface OidcRuntime {
  setting: OidcProviderSetting;
  info: PresetInfo;
  /** The client secret (Apple: the PEM private key). */
  secret: string;
  scopes: string[];
}

/** The provider when it is configured, enabled and complete; null otherwise. */
export function oidcRuntimeOf(ctx: AppContext, project: ProjectRecord, id: string): OidcRuntime | null {
  if (!OIDC_ID.test(id) || RESERVED_IDS.has(id)) return null;
  const setting = oidcProviders(project.settings).get(id);
  if (!setting || !setting.enabled || !setting.clientId || !setting.issuer) return null;
  const name = oidcSecretName(id);
  const secret = Object.hasOwn(project.secrets, name) ? decrypt(ctx.config.encryptionKey, project.secrets[name]) : null;
  if (!secret) return null;
  const info = presetInfo(setting.preset);
  return { setting, info, secret, scopes: setting.scopes.length ? setting.scopes : info.scopes };
}
