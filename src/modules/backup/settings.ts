/**
 * A restored project's plain settings (the archive's `settings` record), checked as the
 * dashboard's saves check them: an archive is client input, and a setting that skipped its
 * check (an OpenID issuer on the server's private network, a redirect URL on any host) would
 * be a hole. Known settings only; one this server does not know is left out and reported.
 * Secrets never travel (docs/backup.md): providers come back without their client secrets.
 * Knows no HTTP.
 */
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { isPlainObject } from '../../lib/objects.js';
import { normalizeLocale } from '../mail/auth-mails.js';
import { normaliseSiteUrl, settingsPatch, type SettingsInput } from '../projects/inputs.js';
import { checkedOidcProviders } from '../social/oidc-settings-service.js';
import { providerSettings, type ProviderName } from '../social/providers.js';
import { fileSettingsOf } from '../storage/file-settings.js';
import { BackupErrors } from './errors.js';

const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** Settings keys this server restores; each is checked below. */
const KNOWN = new Set(['isAuthEnabled', 'requireEmailVerification', 'allowedDomains', 'mfa', 'passkeys', 'allowSignup', 'allowAnonymous', 'redirectUrls',
  'providerFromEmail', 'mailDefaultLocale', 'files', 'authProviders', 'oidcProviders']);
const SOCIAL: ProviderName[] = ['github', 'google'];

export interface RestoredSettings {
  siteUrl: string | null;
  settings: Record<string, unknown>;
  /** Settings of the archive this server does not know (left out). */
  unknown: string[];
}

function wrong(line: number, what: string): never {
  throw BackupErrors.invalid_archive(`Line ${line} (settings): ${what}.`);
}

/** The archive's settings as this server would store them; 400 invalid_archive naming what is wrong. */
export function restoredSettings(ctx: AppContext, raw: Record<string, unknown>, siteUrl: string | null, line: number): RestoredSettings {
  const unknown = Object.keys(raw).filter((k) => !KNOWN.has(k));
  const has = (k: string) => Object.hasOwn(raw, k) && raw[k] !== undefined && raw[k] !== null;
  const input: SettingsInput = {};
  for (const k of ['isAuthEnabled', 'requireEmailVerification', 'allowSignup', 'allowAnonymous'] as const) {
    if (!has(k)) continue;
    const v = raw[k];
    if (!isBool(v)) wrong(line, `${k} is true or false`);
    input[k] = v;
  }
  if (has('allowedDomains')) {
    if (!isStrings(raw.allowedDomains)) wrong(line, 'allowedDomains is a list of strings');
    input.allowedDomains = raw.allowedDomains;
  }
  if (has('redirectUrls')) {
    if (!isStrings(raw.redirectUrls)) wrong(line, 'redirectUrls is a list of strings');
    input.redirectUrls = raw.redirectUrls;
  }
  if (has('mfa')) {
    const policy = isPlainObject(raw.mfa) ? raw.mfa.policy : undefined;
    if (policy === 'offer' || policy === 'require') input.mfaPolicy = policy;
    else wrong(line, "mfa is {policy: 'offer' | 'require'}");
  }
  if (has('passkeys')) {
    const pk = raw.passkeys;
    if (!isPlainObject(pk) || typeof pk.rpId !== 'string' || !isStrings(pk.origins)) wrong(line, 'passkeys is {rpId, origins}');
    input.passkeys = { rpId: pk.rpId, origins: pk.origins };
  }
  if (has('providerFromEmail')) {
    if (typeof raw.providerFromEmail !== 'string') wrong(line, 'providerFromEmail is a string');
    input.providerFromEmail = raw.providerFromEmail;
  }
  let settings: Record<string, unknown> = {};
  let site: string | null = null;
  try {
    // The dashboard's own checks and shapes (no secret is given, so none is written).
    settings = settingsPatch({ settings: {}, secrets: {} }, input, ctx.config.encryptionKey).settings ?? {};
    site = siteUrl === null ? null : normaliseSiteUrl(siteUrl);
    if (has('oidcProviders')) settings.oidcProviders = checkedOidcProviders(ctx, raw.oidcProviders);
  } catch (err) {
    if (err instanceof AppError) wrong(line, err.message.replace(/\.$/, ''));
    throw err;
  }
  if (has('mailDefaultLocale')) {
    const locale = normalizeLocale(raw.mailDefaultLocale);
    if (!locale) wrong(line, 'mailDefaultLocale is a language tag such as de or pt-BR');
    settings.mailDefaultLocale = locale;
  }
  if (has('files')) {
    if (!isPlainObject(raw.files)) wrong(line, 'files is an object');
    const f = fileSettingsOf({ settings: { files: raw.files } });
    settings.files = { private: f.private, allowedTypes: f.allowedTypes, maxFileBytes: f.maxFileBytes, signedTransformsOnly: f.signedTransformsOnly };
  }
  if (has('authProviders')) {
    if (!isPlainObject(raw.authProviders)) wrong(line, 'authProviders is an object');
    const providers: Record<string, unknown> = {};
    for (const p of SOCIAL) if (isPlainObject(raw.authProviders[p])) providers[p] = providerSettings({ authProviders: raw.authProviders }, p);
    settings.authProviders = providers;
  }
  return { siteUrl: site, settings, unknown };
}
