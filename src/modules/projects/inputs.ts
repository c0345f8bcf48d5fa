/**
 * Project settings edits (PATCH /api/projects/:id): validates each field and turns the body
 * into a row patch. Both spellings of the mail fields are accepted (docs/wire-compatibility.md §7.9):
 * `providerApiKey`/`resendApiKey` (encrypted into secrets.mailApiKey) and
 * `providerFromEmail`/`resendFromEmail` (settings.providerFromEmail). Pure: no I/O.
 */
import { encrypt, type Encrypted } from '../../lib/crypto.js';
import { normaliseRedirectUrl } from '../../lib/redirect-target.js';
import { ProjectErrors } from './errors.js';
import type { ProjectPatch } from './queries.js';

export interface SettingsInput {
  name?: string;
  description?: string;
  siteUrl?: string;
  allowedDomains?: string[];
  isAuthEnabled?: boolean;
  requireEmailVerification?: boolean;
  providerApiKey?: string | null;
  resendApiKey?: string | null;
  providerFromEmail?: string;
  resendFromEmail?: string;
  /** Second factors for end users: offered (default) or required (docs/auth.md "Second factors"). */
  mfaPolicy?: 'offer' | 'require';
  /** The WebAuthn relying party of the project's end users: its id (a domain) and the origins allowed to use it. */
  passkeys?: { rpId: string; origins: string[] } | null;
  /** Whether new end-user accounts may be created by sign-up, passwordless sign-in or a guest linking an email (default true). */
  allowSignup?: boolean;
  /** Whether guests may sign in anonymously (default false). */
  allowAnonymous?: boolean;
  /** URLs besides the site URL that sign-in links may open (docs/auth.md "Passwordless by email"). */
  redirectUrls?: string[];
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const MAIL_KEY = /^re_[A-Za-z0-9_]+$/;
const ADDRESS = '[^\\s@<>]+@[^\\s@<>]+\\.[^\\s@<>]+';
const FROM = new RegExp(`^(${ADDRESS}|[^<>]+ <${ADDRESS}>)$`);
const DOMAIN = /^(\*|(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:\d{1,5})?|https?:\/\/[a-z0-9-]+(\.[a-z0-9-]+)*(:\d{1,5})?\/?)$/i;

/** A site URL must be https, or http on a loopback host (local development). "" means none. */
export function normaliseSiteUrl(raw: string | null | undefined): string | null {
  const value = raw?.trim();
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw ProjectErrors.invalid_site_url('Invalid Site URL format.');
  }
  const ok = url.protocol === 'https:' || (url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname));
  if (!ok) throw ProjectErrors.invalid_site_url();
  return value.replace(/\/+$/, '');
}

export function normaliseDomains(list: string[]): string[] {
  const domains = [...new Set(list.map((d) => d.trim()).filter(Boolean))];
  const bad = domains.find((d) => !DOMAIN.test(d));
  if (bad !== undefined) throw ProjectErrors.invalid_settings(`Invalid allowed domain '${bad}'. Use '*', 'example.com', '*.example.com' or 'https://app.example.com'.`);
  // An emptied list means "no restriction", not "block every browser".
  return domains.length ? domains : ['*'];
}

/**
 * A relying party id is a host name; each origin must be https (or http on a loopback host)
 * and its host the rpId or a subdomain of it, as browsers require.
 */
export function passkeySettings(input: { rpId: string; origins: string[] }): { rpId: string; origins: string[] } {
  const rpId = input.rpId.trim().toLowerCase();
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(rpId)) throw ProjectErrors.invalid_settings('passkeys.rpId must be a host name such as example.com.');
  const origins = [...new Set(input.origins.map((o) => o.trim().replace(/\/+$/, '')))];
  if (!origins.length) throw ProjectErrors.invalid_settings('passkeys.origins needs at least one origin.');
  for (const origin of origins) {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw ProjectErrors.invalid_settings(`Invalid passkey origin '${origin}'.`);
    }
    const secure = url.protocol === 'https:' || (url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname));
    const under = url.hostname === rpId || url.hostname.endsWith(`.${rpId}`);
    if (!secure || !under || url.origin !== origin) {
      throw ProjectErrors.invalid_settings(`Passkey origin '${origin}' must be https (http only on localhost) on ${rpId} or a subdomain of it.`);
    }
  }
  return { rpId, origins };
}

/** Redirect URLs: each https (http only on a loopback host), without credentials or fragment. */
export function redirectUrls(list: string[]): string[] {
  const out = new Set<string>();
  for (const raw of list) {
    const url = normaliseRedirectUrl(raw);
    if (!url) throw ProjectErrors.invalid_settings(`Invalid redirect URL '${raw}': use https://… (http only on localhost), without credentials or #fragment.`);
    out.add(url);
  }
  return [...out];
}

function mailKey(input: SettingsInput): string | null | undefined {
  const key = input.providerApiKey !== undefined ? input.providerApiKey : input.resendApiKey;
  if (key === undefined || key === null) return key;
  if (!MAIL_KEY.test(key)) throw ProjectErrors.invalid_settings('providerApiKey must be a Resend API key (re_...).');
  return key;
}

function fromEmail(input: SettingsInput): string | undefined {
  const value = (input.providerFromEmail ?? input.resendFromEmail)?.trim();
  if (value === undefined || value === '') return value;
  if (!FROM.test(value)) {
    throw ProjectErrors.invalid_settings("providerFromEmail must be a valid format (e.g., 'me@domain.com' or 'App <me@domain.com>').");
  }
  return value;
}

/** The row patch for a settings edit of a project whose current settings/secrets are given. */
export function settingsPatch(
  current: { settings: Record<string, unknown>; secrets: Record<string, Encrypted> },
  input: SettingsInput,
  encryptionKey: Buffer,
): ProjectPatch {
  const patch: ProjectPatch = {};
  if (input.name !== undefined) {
    const name = input.name.trim();
    if (!name) throw ProjectErrors.invalid_settings('name must be a non-empty string.');
    patch.name = name;
  }
  if (input.description !== undefined) patch.description = input.description.trim();
  if (input.siteUrl !== undefined) patch.site_url = normaliseSiteUrl(input.siteUrl);

  const settings = { ...current.settings };
  if (input.allowedDomains !== undefined) settings.allowedDomains = normaliseDomains(input.allowedDomains);
  if (input.isAuthEnabled !== undefined) settings.isAuthEnabled = input.isAuthEnabled;
  if (input.requireEmailVerification !== undefined) settings.requireEmailVerification = input.requireEmailVerification;
  if (input.mfaPolicy !== undefined) settings.mfa = { policy: input.mfaPolicy };
  if (input.passkeys === null) delete settings.passkeys;
  else if (input.passkeys !== undefined) settings.passkeys = passkeySettings(input.passkeys);
  if (input.allowSignup !== undefined) settings.allowSignup = input.allowSignup;
  if (input.allowAnonymous !== undefined) settings.allowAnonymous = input.allowAnonymous;
  if (input.redirectUrls !== undefined) settings.redirectUrls = redirectUrls(input.redirectUrls);
  const from = fromEmail(input);
  if (from === '') delete settings.providerFromEmail;
  else if (from !== undefined) settings.providerFromEmail = from;
  patch.settings = settings;

  const key = mailKey(input);
  if (key !== undefined) {
    const secrets = { ...current.secrets };
    if (key === null) delete secrets.mailApiKey;
    else secrets.mailApiKey = encrypt(encryptionKey, key);
    patch.secrets = secrets;
  }
  return patch;
}
