/**
 * A fake Google on 127.0.0.1: authorize (consents at once as `nextUser`), token (checks client
 * credentials, redirect URI and PKCE; returns an RS256 ID token carrying the nonce), userinfo
 * and the JWKS. Point GOOGLE_AUTH_URL, GOOGLE_TOKEN_URL, GOOGLE_USERINFO_URL and
 * GOOGLE_JWKS_URL at `endpoints`.
 */
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { authorize, bearer, closeServer, json, newCode, pkceMatches, startServer, type Grant } from './oauth-common.js';

export interface FakeGoogleUser {
  sub: string;
  email?: string;
  email_verified: boolean;
  name?: string;
  picture?: string;
}

export interface FakeGoogle {
  env: Record<string, string>;
  clientId: string;
  clientSecret: string;
  nextUser: FakeGoogleUser;
  /** Overrides the ID token's audience (to test that a foreign token is refused). */
  audienceOverride?: string;
  close(): Promise<void>;
}

export async function startFakeGoogle(): Promise<FakeGoogle> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'fake-key-1', alg: 'RS256', use: 'sig' };
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, FakeGoogleUser>();
  const fake: FakeGoogle = {
    env: {},
    clientId: 'google-client-id.apps.googleusercontent.com',
    clientSecret: 'google-client-secret',
    nextUser: { sub: '110000000000000000001', email: 'gina@example.com', email_verified: true, name: 'Gina Google' },
    close: async () => {},
  };
  const idToken = (user: FakeGoogleUser, nonce: string | null, key: CryptoKey) =>
    new SignJWT({ ...user, ...(nonce ? { nonce } : {}) })
      .setProtectedHeader({ alg: 'RS256', kid: 'fake-key-1' })
      .setIssuer('https://accounts.google.com')
      .setAudience(fake.audienceOverride ?? fake.clientId)
      .setSubject(user.sub)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(key);

  const { server, url } = await startServer(async (req, u, body, res) => {
    if (u.pathname === '/auth') return authorize(u, res, grants, { ...fake.nextUser });
    if (u.pathname === '/certs') return json(res, 200, { keys: [jwk] });
    if (u.pathname === '/token' && req.method === 'POST') {
      const grant = grants.get(body.get('code') ?? '');
      grants.delete(body.get('code') ?? '');
      const valid = grant && body.get('client_id') === fake.clientId && body.get('client_secret') === fake.clientSecret
        && body.get('redirect_uri') === grant.redirectUri && pkceMatches(grant.codeChallenge, body.get('code_verifier'));
      if (!valid) return json(res, 400, { error: 'invalid_grant', error_description: 'Bad Request' });
      const user = grant.profile as unknown as FakeGoogleUser;
      const token = `ya29.${newCode()}`;
      tokens.set(token, user);
      return json(res, 200, {
        access_token: token, token_type: 'Bearer', expires_in: 3599, scope: 'openid email profile',
        id_token: await idToken(user, grant.nonce, privateKey),
      });
    }
    if (u.pathname === '/userinfo') {
      const user = tokens.get(bearer(req) ?? '');
      return user ? json(res, 200, user) : json(res, 401, { error: 'invalid_token' });
    }
    return json(res, 404, { error: 'not_found' });
  });
  fake.env = {
    GOOGLE_AUTH_URL: `${url}/auth`,
    GOOGLE_TOKEN_URL: `${url}/token`,
    GOOGLE_USERINFO_URL: `${url}/userinfo`,
    GOOGLE_JWKS_URL: `${url}/certs`,
  };
  fake.close = () => closeServer(server);
  return fake;
}
