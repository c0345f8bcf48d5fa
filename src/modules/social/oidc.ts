/**
 * Sign-in with any OpenID Connect provider, driven by oauth4webapi: discovery (the issuer
 * checked), authorization URL with state, nonce and PKCE S256, code exchange, and the ID
 * token checked: its signature against the issuer's JWKS (asymmetric algorithms only: never
 * `none`, never an HMAC keyed by the client secret), `iss`, `aud`, `exp`, `iat` and `nonce`.
 * Discord speaks plain OAuth 2.0: its profile comes from its API over the token's TLS channel.
 */
import { importPKCS8, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import type { AppContext } from '../../context.js';
import { redirectUriOf, type OidcRuntime } from './oidc-config.js';
import { DiscoveryFailed } from './oidc-discovery.js';
import { providerEmail, type SocialProfile } from './providers.js';
import { SocialErrors } from './errors.js';

/** Algorithms an ID token may be signed with: asymmetric only, RS256 first. */
const ASYMMETRIC = ['RS256', 'PS256', 'ES256', 'EdDSA', 'RS384', 'RS512', 'PS384', 'PS512', 'ES384', 'ES512', 'Ed25519'];

function idTokenAlg(as: oauth.AuthorizationServer): string {
  const offered = as.id_token_signing_alg_values_supported ?? [];
  return ASYMMETRIC.find((a) => offered.includes(a)) ?? 'RS256';
}

/** The provider's authorization server: discovered (OIDC) or fixed (Discord). */
export async function serverOf(ctx: AppContext, rt: OidcRuntime): Promise<oauth.AuthorizationServer> {
  const issuer = rt.setting.issuer.replace(/\/+$/, '');
  if (!rt.info.oidc) {
    return ctx.oidc.fixed(issuer, () => ({
      issuer,
      authorization_endpoint: `${issuer}/oauth2/authorize`,
      token_endpoint: `${issuer}/api/oauth2/token`,
      userinfo_endpoint: `${issuer}/api/users/@me`,
    }));
  }
  try {
    return await ctx.oidc.discover(rt.setting.issuer);
  } catch (err) {
    if (err instanceof DiscoveryFailed) throw SocialErrors.oidc_discovery_failed(`${rt.setting.label}: ${err.message}`.slice(0, 300));
    throw err;
  }
}

export interface OidcAuthorize {
  state: string;
  nonce: string | null;
  codeChallenge: string;
}

export async function oidcAuthorizeUrl(ctx: AppContext, rt: OidcRuntime, a: OidcAuthorize): Promise<string> {
  const as = await serverOf(ctx, rt);
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', rt.setting.clientId);
  url.searchParams.set('redirect_uri', redirectUriOf(ctx.config.publicUrl, rt.setting.id));
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', rt.scopes.join(' '));
  url.searchParams.set('state', a.state);
  url.searchParams.set('code_challenge', a.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  if (a.nonce) url.searchParams.set('nonce', a.nonce);
  if (rt.info.formPost) url.searchParams.set('response_mode', 'form_post');
  return url.toString();
}

/** Apple's client secret: a short-lived ES256 JWT signed with the team's private key. */
export async function appleClientSecret(rt: OidcRuntime, now: Date): Promise<string> {
  const key = await importPKCS8(rt.secret, 'ES256');
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: rt.setting.keyId ?? '' })
    .setIssuer(rt.setting.teamId ?? '')
    .setSubject(rt.setting.clientId)
    .setAudience(rt.setting.issuer) // Apple: https://appleid.apple.com
    .setIssuedAt(iat)
    .setExpirationTime(iat + 300)
    .sign(key);
}

async function clientAuth(ctx: AppContext, rt: OidcRuntime, as: oauth.AuthorizationServer): Promise<oauth.ClientAuth> {
  if (rt.info.keySecret) return oauth.ClientSecretPost(await appleClientSecret(rt, ctx.clock.now()));
  const methods = as.token_endpoint_auth_methods_supported;
  if (!methods || methods.includes('client_secret_basic')) return oauth.ClientSecretBasic(rt.secret);
  return oauth.ClientSecretPost(rt.secret);
}

const truthy = (v: unknown) => v === true || v === 'true';
const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 200) : null);

/** Apple sends the name once, on the first consent, in the `user` form field (not in the ID token). */
function appleName(raw: string | null): string | null {
  if (!raw) return null;
  try {
    const u = JSON.parse(raw) as { name?: { firstName?: unknown; lastName?: unknown } };
    return text([text(u.name?.firstName), text(u.name?.lastName)].filter(Boolean).join(' '));
  } catch {
    return null;
  }
}

/**
 * Whether the provider vouches for the address. Microsoft Entra ID sends no `email_verified`:
 * its `email` is whatever a tenant admin typed, unless the optional claim `xms_edov` (email
 * domain owner verified) says otherwise (docs/auth.md).
 */
function emailVerified(rt: OidcRuntime, claims: Record<string, unknown>): boolean {
  if (rt.setting.preset === 'microsoft') return truthy(claims.xms_edov) || claims.xms_edov === 1;
  return truthy(claims.email_verified);
}

function profileFromClaims(rt: OidcRuntime, claims: Record<string, unknown>, extraName: string | null): SocialProfile {
  const email = providerEmail(claims.email);
  const joined = [text(claims.given_name), text(claims.family_name)].filter(Boolean).join(' ');
  return {
    providerId: String(claims.sub),
    email,
    emailVerified: email !== null && emailVerified(rt, claims),
    name: text(claims.name) ?? text(joined) ?? extraName,
    username: text(claims.preferred_username) ?? text(claims.nickname) ?? (email ? email.split('@')[0]! : null),
    avatarUrl: text(claims.picture),
  };
}

interface DiscordUser {
  id?: string;
  username?: string;
  global_name?: string | null;
  email?: string | null;
  verified?: boolean;
  avatar?: string | null;
}

async function discordProfile(ctx: AppContext, as: oauth.AuthorizationServer, accessToken: string): Promise<SocialProfile> {
  const headers = new Headers({ accept: 'application/json' });
  const res = await oauth.protectedResourceRequest(accessToken, 'GET', new URL(as.userinfo_endpoint!), headers, null, ctx.oidc.http());
  if (!res.ok) throw new Error(`Discord answered ${res.status} for the profile`);
  const u = (await res.json()) as DiscordUser;
  if (typeof u.id !== 'string' || !u.id) throw new Error('Discord returned no user id');
  const email = providerEmail(u.email);
  return {
    providerId: u.id,
    email,
    emailVerified: email !== null && u.verified === true,
    name: text(u.global_name) ?? text(u.username),
    username: text(u.username),
    avatarUrl: u.avatar ? `https://cdn.discordapp.com/avatars/${encodeURIComponent(u.id)}/${encodeURIComponent(u.avatar)}.png` : null,
  };
}

export interface OidcSignIn {
  profile: SocialProfile;
  /** The issuer the identity belongs to (part of its key). */
  issuer: string;
}

/**
 * Checks the authorization response (`params`: query or form_post body), redeems the code with
 * the PKCE verifier and validates the ID token (signature, iss, aud, exp, nonce).
 */
export async function oidcProfile(ctx: AppContext, rt: OidcRuntime, params: URLSearchParams, verifier: string, nonce: string | null): Promise<OidcSignIn> {
  const as = await serverOf(ctx, rt);
  const client: oauth.Client = rt.info.oidc
    ? { client_id: rt.setting.clientId, id_token_signed_response_alg: idTokenAlg(as) }
    : { client_id: rt.setting.clientId };
  const callback = oauth.validateAuthResponse(as, client, params, params.get('state') ?? oauth.expectNoState);
  const redirectUri = redirectUriOf(ctx.config.publicUrl, rt.setting.id);
  const res = await oauth.authorizationCodeGrantRequest(as, client, await clientAuth(ctx, rt, as), callback, redirectUri, verifier, ctx.oidc.http());
  if (!rt.info.oidc) {
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
    return { profile: await discordProfile(ctx, as, tokens.access_token), issuer: as.issuer };
  }
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res, { expectedNonce: nonce ?? oauth.expectNoNonce, requireIdToken: true });
  await oauth.validateApplicationLevelSignature(as, res, ctx.oidc.http());
  const claims = oauth.getValidatedIdTokenClaims(tokens)! as unknown as Record<string, unknown>;
  let merged = claims;
  if (!claims.email && as.userinfo_endpoint) {
    const infoRes = await oauth.userInfoRequest(as, client, tokens.access_token, ctx.oidc.http());
    const info = await oauth.processUserInfoResponse(as, client, String(claims.sub), infoRes);
    merged = { ...info, ...claims, email: info.email, email_verified: info.email_verified };
  }
  return { profile: profileFromClaims(rt, merged, appleName(params.get('user'))), issuer: as.issuer };
}
