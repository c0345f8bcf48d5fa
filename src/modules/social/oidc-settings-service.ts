/**
 * The dashboard's side of OpenID Connect providers: list, set (create or change) and delete
 * one provider of a project. Secrets are encrypted at rest and never returned; every API node
 * drops its cached project at once (bus `project_changed`). Knows no HTTP.
 */
import { importPKCS8 } from 'jose';
import type { AppContext } from '../../context.js';
import { encrypt } from '../../lib/crypto.js';
import { isPublicHost } from '../../lib/public-network.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { loadMemberProject } from '../projects/access.js';
import { SocialErrors } from './errors.js';
import {
  MAX_OIDC_PROVIDERS, OIDC_ID, RESERVED_IDS, oidcProviderView, oidcProviders, oidcSecretName, presetInfo, presetList,
  type OidcProviderSetting, type Preset,
} from './oidc-config.js';
import { DiscoveryFailed } from './oidc-discovery.js';
import { deleteOidcProvider, saveOidcProvider } from './queries.js';

export interface OidcProviderInput {
  preset: Preset;
  label?: string;
  issuer?: string;
  clientId?: string;
  clientSecret?: string;
  scopes?: string[];
  enabled?: boolean;
  teamId?: string;
  keyId?: string;
}

export async function listOidcProviders(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  const row = await loadMemberProject(ctx, operator, projectId);
  const providers = [...oidcProviders(row.settings).values()].map((p) => oidcProviderView(p, row.secrets, ctx.config.publicUrl));
  return { providers, presets: presetList() };
}

function invalid(message: string): never {
  throw SocialErrors.oidc_provider_invalid(message);
}

/** An issuer URL as discovery will use it: https and a public host unless private issuers are allowed. */
function checkIssuer(ctx: AppContext, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return invalid('The issuer must be an absolute URL.');
  }
  const allowPrivate = ctx.config.oauth.allowPrivateIssuers;
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) invalid('The issuer must use https.');
  if (url.username || url.password || url.search || url.hash) invalid('The issuer must not carry credentials, a query or a fragment.');
  if (!allowPrivate && !isPublicHost(url.hostname)) invalid('The issuer must be a public host (not loopback or a private network).');
  const text = url.toString();
  // The issuer is compared exactly with the discovery document's: keep what the operator typed (no added slash).
  return raw.trim().endsWith('/') ? text : text.replace(/\/$/, '');
}

function checkScopes(scopes: string[]): string[] {
  const clean = scopes.map((s) => s.trim()).filter(Boolean);
  if (clean.some((s) => !/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/.test(s))) invalid('A scope is one word of printable characters.');
  return [...new Set(clean)];
}

async function checkAppleKey(pem: string): Promise<void> {
  try {
    await importPKCS8(pem, 'ES256');
  } catch {
    invalid("Apple needs the private key (.p8, PKCS #8 PEM, P-256) as the client secret.");
  }
}

/**
 * The providers of a restored project's archived settings (src/modules/backup), checked as a
 * save checks them, without a network call: ids, issuers (https, a public host unless private
 * issuers are allowed), scopes, at most MAX_OIDC_PROVIDERS. Their client secrets never travel,
 * so a restored provider works once its secret is entered again (which also runs discovery).
 * A provider that fails a check is 422 oidc_provider_invalid naming it.
 */
export function checkedOidcProviders(ctx: AppContext, raw: unknown): Record<string, OidcProviderSetting> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) invalid('oidcProviders is an object of providers by id.');
  const entries = Object.keys(raw);
  const parsed = oidcProviders({ oidcProviders: raw });
  if (entries.length > MAX_OIDC_PROVIDERS) invalid(`At most ${MAX_OIDC_PROVIDERS} providers.`);
  const out: Record<string, OidcProviderSetting> = {};
  for (const id of entries) {
    const p = parsed.get(id);
    if (!p || RESERVED_IDS.has(id)) invalid(`Provider '${id.slice(0, 60)}': not a valid provider (its id, or its preset).`);
    const info = presetInfo(p.preset);
    const scopes = checkScopes(p.scopes);
    if (info.oidc && scopes.length && !scopes.includes('openid')) invalid(`Provider '${id}': the scopes of an OpenID Connect provider include openid.`);
    Object.defineProperty(out, id, { value: { ...p, issuer: checkIssuer(ctx, p.issuer), scopes, label: p.label.slice(0, 60), clientId: p.clientId.trim() }, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Creates or changes one provider. */
export async function setOidcProvider(ctx: AppContext, operator: OperatorIdentity, projectId: string, id: string, input: OidcProviderInput) {
  const row = await loadMemberProject(ctx, operator, projectId);
  if (!OIDC_ID.test(id) || RESERVED_IDS.has(id)) {
    invalid('The provider id is 1 to 40 lower-case letters, digits or dashes, starting with a letter, and not github, google, exchange or providers.');
  }
  const all = oidcProviders(row.settings);
  const current = all.get(id);
  if (!current && all.size >= MAX_OIDC_PROVIDERS) throw SocialErrors.oidc_provider_limit();
  if (current && current.preset !== input.preset) invalid('The preset of a provider cannot change; delete it and add it again.');
  const info = presetInfo(input.preset);
  const issuerRaw = input.issuer ?? current?.issuer ?? info.defaultIssuer;
  if (!issuerRaw) invalid(`${info.label} needs its issuer URL (e.g. ${info.issuerHint}).`);
  const next: OidcProviderSetting = {
    id,
    preset: input.preset,
    label: (input.label ?? current?.label ?? info.label).trim().slice(0, 60) || info.label,
    issuer: checkIssuer(ctx, issuerRaw),
    clientId: (input.clientId ?? current?.clientId ?? '').trim(),
    scopes: input.scopes !== undefined ? checkScopes(input.scopes) : current?.scopes ?? [],
    enabled: input.enabled ?? current?.enabled ?? false,
    ...(info.keySecret ? { teamId: (input.teamId ?? current?.teamId ?? '').trim(), keyId: (input.keyId ?? current?.keyId ?? '').trim() } : {}),
    updatedAt: ctx.clock.now().toISOString(),
  };
  if (info.oidc && next.scopes.length && !next.scopes.includes('openid')) invalid('The scopes of an OpenID Connect provider include openid.');
  if (input.clientSecret !== undefined && !input.clientSecret.trim()) throw SocialErrors.client_secret_empty();
  const secret = input.clientSecret?.trim();
  if (secret && info.keySecret) await checkAppleKey(secret);
  const name = oidcSecretName(id);
  const hasSecret = !!secret || (Object.hasOwn(row.secrets, name) && !!row.secrets[name]);
  if (next.enabled) {
    if (!next.clientId || !hasSecret) throw SocialErrors.provider_incomplete(`${next.label} requires clientId and clientSecret before it can be enabled.`);
    if (info.keySecret && (!next.teamId || !next.keyId)) throw SocialErrors.provider_incomplete(`${next.label} requires teamId and keyId before it can be enabled.`);
    if (!row.site_url) throw SocialErrors.provider_site_url(`You must configure a Site URL in Project Settings before enabling ${next.label}.`);
    if (info.oidc) await checkDiscovery(ctx, next);
  }
  await saveOidcProvider(ctx.db.admin, row.id, id, next as unknown as Record<string, unknown>, secret ? { name, value: encrypt(ctx.config.encryptionKey, secret) } : null, ctx.clock.now());
  await ctx.bus.publish({ type: 'project_changed', id: row.id });
  const secrets = secret ? { ...row.secrets, [name]: encrypt(ctx.config.encryptionKey, secret) } : row.secrets;
  return oidcProviderView(next, secrets, ctx.config.publicUrl);
}

/** An enabled provider must be discoverable now (fresh metadata: the issuer may have just changed). */
async function checkDiscovery(ctx: AppContext, next: OidcProviderSetting): Promise<void> {
  ctx.oidc.forget(next.issuer);
  try {
    await ctx.oidc.discover(next.issuer);
  } catch (err) {
    if (err instanceof DiscoveryFailed) throw SocialErrors.oidc_discovery_failed(`Discovery of ${next.issuer} failed: ${err.message}`.slice(0, 300));
    throw err;
  }
}

export async function removeOidcProvider(ctx: AppContext, operator: OperatorIdentity, projectId: string, id: string): Promise<void> {
  const row = await loadMemberProject(ctx, operator, projectId);
  if (!OIDC_ID.test(id) || !(await deleteOidcProvider(ctx.db.admin, row.id, id, oidcSecretName(id), ctx.clock.now()))) {
    throw SocialErrors.oidc_provider_missing();
  }
  await ctx.bus.publish({ type: 'project_changed', id: row.id });
}
