/**
 * The two identity providers, driven by oauth4webapi (authorization URL, code exchange with
 * PKCE S256, ID-token validation). Endpoints come from config so tests point them at fakes.
 * Per project: `settings.authProviders.<p> = {enabled, clientId}` and the client secret
 * AES-256-GCM encrypted in `secrets.<p>ClientSecret`.
 */
import * as oauth from 'oauth4webapi';
import type { Config } from '../../config.js';
import type { AppContext } from '../../context.js';
import { decrypt } from '../../lib/crypto.js';
import { isEmail, normalizeEmail } from '../../lib/email.js';
import type { ProjectRecord } from '../projects/cache.js';
import { PROVIDERS, type OAuthServers, type ProviderName } from './provider-names.js';
import { OIDC_ID } from './oidc-config.js';

export { PROVIDERS, type OAuthServers, type ProviderName } from './provider-names.js';

/** The provider's name as shown to people. */
export const providerLabel = (p: ProviderName) => (p === 'github' ? 'GitHub' : 'Google');

export const isProvider = (p: string): p is ProviderName => (PROVIDERS as readonly string[]).includes(p);

/** GitHub, Google, or a name an OpenID Connect provider of a project may have (oidc-config.ts). */
export const isProviderName = (p: string): boolean => isProvider(p) || OIDC_ID.test(p);

export interface ProviderSetting {
  enabled: boolean;
  clientId: string;
}

export interface Credentials {
  clientId: string;
  clientSecret: string;
}

/** What the providers tell us about the person signing in. */
export interface SocialProfile {
  providerId: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  username: string | null;
  avatarUrl: string | null;
}

/** A provider's email as we store addresses (trimmed, lower-cased); null when it is not one. */
export function providerEmail(raw: unknown): string | null {
  const email = typeof raw === 'string' ? normalizeEmail(raw) : '';
  return isEmail(email) ? email : null;
}

export const secretName = (p: ProviderName) => `${p}ClientSecret`;

export function providerSettings(settings: Record<string, unknown>, p: ProviderName): ProviderSetting {
  const all = (settings.authProviders ?? {}) as Partial<Record<ProviderName, Partial<ProviderSetting>>>;
  const s = all[p] ?? {};
  return { enabled: s.enabled === true, clientId: typeof s.clientId === 'string' ? s.clientId : '' };
}

/** The provider's credentials when it is enabled and complete; null otherwise. */
export function credentialsOf(ctx: AppContext, project: ProjectRecord, p: ProviderName): Credentials | null {
  const s = providerSettings(project.settings, p);
  const clientSecret = decrypt(ctx.config.encryptionKey, project.secrets[secretName(p)]);
  if (!s.enabled || !s.clientId || !clientSecret) return null;
  return { clientId: s.clientId, clientSecret };
}

/**
 * Authorization-server metadata, one stable object per node (oauth4webapi caches JWKS by it),
 * built once at start-up (src/boot.ts).
 */
export function createOAuthServers(config: Config): OAuthServers {
  const o = config.oauth;
  return {
      github: {
        issuer: o.githubBaseUrl,
        authorization_endpoint: `${o.githubBaseUrl}/login/oauth/authorize`,
        token_endpoint: `${o.githubBaseUrl}/login/oauth/access_token`,
      },
      google: {
        issuer: 'https://accounts.google.com',
        authorization_endpoint: o.googleAuthUrl,
        token_endpoint: o.googleTokenUrl,
        userinfo_endpoint: o.googleUserinfoUrl,
        jwks_uri: o.googleJwksUrl,
        id_token_signing_alg_values_supported: ['RS256'],
      },
  };
}

const authorizationServer = (ctx: AppContext, p: ProviderName): oauth.AuthorizationServer => ctx.oauthServers[p];

/** Plain-http provider endpoints are allowed outside production only (fake providers in tests). */
export function httpOptions(ctx: AppContext): { [oauth.allowInsecureRequests]?: boolean } {
  return ctx.config.production ? {} : { [oauth.allowInsecureRequests]: true };
}

const redirectUri = (ctx: AppContext, p: ProviderName) => `${ctx.config.publicUrl}/api/userAuth/social/${p}/callback`;

/**
 * Checks the callback parameters and redeems the code (PKCE, client_secret_post); the caller
 * processes `res`. `redirect`: the callback the flow was started with (a project's social
 * callback by default; the console's GitHub sign-in has its own, src/modules/operators/github.ts).
 */
export async function codeGrant(
  ctx: AppContext, p: ProviderName, client: oauth.Client, creds: Credentials, params: URLSearchParams, verifier: string, redirect = redirectUri(ctx, p),
): Promise<{ as: oauth.AuthorizationServer; res: Response }> {
  const as = authorizationServer(ctx, p);
  const callback = oauth.validateAuthResponse(as, client, params, params.get('state') ?? oauth.expectNoState);
  const res = await oauth.authorizationCodeGrantRequest(
    as, client, oauth.ClientSecretPost(creds.clientSecret), callback, redirect, verifier, httpOptions(ctx),
  );
  return { as, res };
}

export interface AuthorizeParams {
  clientId: string;
  state: string;
  codeChallenge: string;
  nonce: string | null;
  /** The callback to come back to; a project's social callback by default. */
  redirectUri?: string;
}

export function authorizeUrl(ctx: AppContext, p: ProviderName, a: AuthorizeParams): string {
  const url = new URL(authorizationServer(ctx, p).authorization_endpoint!);
  url.searchParams.set('client_id', a.clientId);
  url.searchParams.set('redirect_uri', a.redirectUri ?? redirectUri(ctx, p));
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', p === 'github' ? 'read:user user:email' : 'openid email profile');
  url.searchParams.set('state', a.state);
  url.searchParams.set('code_challenge', a.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  if (a.nonce) url.searchParams.set('nonce', a.nonce);
  if (p === 'google') url.searchParams.set('prompt', 'select_account');
  return url.toString();
}
