/**
 * Google (OpenID Connect): code exchange with PKCE and nonce; the ID token's signature is
 * checked against Google's JWKS (RS256) and its iss/aud/exp/nonce by oauth4webapi; profile
 * details come from the userinfo endpoint, bound to the ID token's subject.
 */
import * as oauth from 'oauth4webapi';
import type { AppContext } from '../../context.js';
import { codeGrant, httpOptions, providerEmail, type Credentials, type SocialProfile } from './providers.js';

export async function googleProfile(ctx: AppContext, creds: Credentials, params: URLSearchParams, verifier: string, nonce: string): Promise<SocialProfile> {
  const client: oauth.Client = { client_id: creds.clientId, id_token_signed_response_alg: 'RS256' };
  const { as, res } = await codeGrant(ctx, 'google', client, creds, params, verifier);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res, { expectedNonce: nonce, requireIdToken: true });
  await oauth.validateApplicationLevelSignature(as, res, httpOptions(ctx));
  const claims = oauth.getValidatedIdTokenClaims(tokens)!;
  const infoRes = await oauth.userInfoRequest(as, client, tokens.access_token, httpOptions(ctx));
  const info = await oauth.processUserInfoResponse(as, client, claims.sub, infoRes);
  const email = providerEmail(info.email ?? claims.email);
  const verified = (info.email_verified ?? claims.email_verified) === true;
  return {
    providerId: claims.sub,
    email,
    emailVerified: verified,
    name: (info.name ?? claims.name ?? null) as string | null,
    username: email ? email.split('@')[0]! : null,
    avatarUrl: (info.picture ?? claims.picture ?? null) as string | null,
  };
}
