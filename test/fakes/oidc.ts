/**
 * A fake OpenID Connect provider on 127.0.0.1: discovery, JWKS (an RS256 key), authorize
 * (consents at once as `nextUser`; `response_mode=form_post` answers with the auto-submitting
 * form a real provider sends), the token endpoint (checks the client's authentication, the
 * redirect URI and PKCE; returns an ID token carrying the nonce) and userinfo.
 *
 * `tamper` makes the next ID tokens wrong in one way (a foreign audience or issuer, another
 * nonce, expired, unsigned `alg: none`, or HS256 signed with the client secret), to check the
 * relying party refuses them. With `appleKey` set the client must authenticate with an ES256
 * client-secret JWT signed by that key (Apple).
 */
import type { ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey } from 'jose';
import { bearer, closeServer, json, newCode, pkceMatches, startServer } from './oauth-common.js';

export interface FakeOidcUser {
  sub: string;
  email?: string;
  email_verified?: boolean | string;
  name?: string;
  preferred_username?: string;
  picture?: string;
  [claim: string]: unknown;
}

export type Tamper = 'aud' | 'iss' | 'nonce' | 'expired' | 'alg-none' | 'hs256-client-secret' | 'foreign-key';

export interface FakeOidc {
  url: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  nextUser: FakeOidcUser;
  tamper?: Tamper;
  /** Apple: the public key the client-secret JWT must verify with, and its expected issuer (team id). */
  appleKey?: { publicKey: CryptoKey; teamId: string; keyId: string };
  /** Discord (plain OAuth 2.0, under the issuer path): the profile `/api/users/@me` answers. */
  discordUser: Record<string, unknown>;
  /** Extra form fields posted with a form_post answer (Apple's `user`). */
  formPostExtra?: Record<string, string>;
  /** Every token request's client authentication method seen ('basic' | 'post' | 'apple-jwt'). */
  clientAuthSeen: string[];
  /** Authorization requests received (their query). */
  authorizeRequests: URLSearchParams[];
  close(): Promise<void>;
}

interface Grant {
  clientId: string;
  redirectUri: string;
  codeChallenge: string | null;
  nonce: string | null;
  user: FakeOidcUser;
}

const b64u = (s: string) => Buffer.from(s).toString('base64url');

function formPostPage(res: ServerResponse, action: string, fields: Record<string, string>): void {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const inputs = Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('');
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    .end(`<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="${esc(action)}">${inputs}<noscript><button>Continue</button></noscript></form></body></html>`);
}

/** The fields of a form_post page (tests without a browser). */
export function parseFormPost(html: string): { action: string; fields: Record<string, string> } {
  const unesc = (s: string) => s.replace(/&lt;/g, '<').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
  const action = unesc(/<form method="post" action="([^"]*)"/.exec(html)![1]!);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unesc(m[1]!)] = unesc(m[2]!);
  return { action, fields };
}

export async function startFakeOidc(opts: { issuerPath?: string; clientId?: string; clientSecret?: string } = {}): Promise<FakeOidc> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const foreign = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'fake-oidc-1', alg: 'RS256', use: 'sig' };
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, FakeOidcUser>();
  const fake: FakeOidc = {
    url: '',
    issuer: '',
    clientId: opts.clientId ?? 'plinth-client',
    clientSecret: opts.clientSecret ?? 'fake-oidc-client-secret-0123456789',
    nextUser: { sub: 'oidc-user-1', email: 'olga@example.com', email_verified: true, name: 'Olga OIDC' },
    clientAuthSeen: [],
    authorizeRequests: [],
    discordUser: { id: '80351110224678912', username: 'nelly', global_name: 'Nelly', email: 'nelly@example.com', verified: true, avatar: null },
    close: async () => {},
  };

  async function idToken(grant: Grant): Promise<string> {
    const t = fake.tamper;
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      ...grant.user,
      iss: t === 'iss' ? `${fake.issuer}-evil` : fake.issuer,
      aud: t === 'aud' ? 'another-client' : grant.clientId,
      iat: t === 'expired' ? now - 7200 : now,
      exp: t === 'expired' ? now - 3600 : now + 3600,
      ...(grant.nonce ? { nonce: t === 'nonce' ? 'not-the-nonce' : grant.nonce } : {}),
    };
    if (t === 'alg-none') return `${b64u(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64u(JSON.stringify(claims))}.`;
    if (t === 'hs256-client-secret') {
      return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'fake-oidc-1' }).sign(new TextEncoder().encode(fake.clientSecret));
    }
    const key = t === 'foreign-key' ? foreign.privateKey : privateKey;
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'fake-oidc-1', typ: 'JWT' }).sign(key);
  }

  /** The client's authentication at the token endpoint; null when it fails. */
  async function clientOf(authorization: string | undefined, body: URLSearchParams): Promise<string | null> {
    if (fake.appleKey) {
      try {
        const { payload, protectedHeader } = await jwtVerify(body.get('client_secret') ?? '', fake.appleKey.publicKey, {
          algorithms: ['ES256'], issuer: fake.appleKey.teamId, audience: fake.issuer, subject: body.get('client_id') ?? '',
        });
        if (protectedHeader.kid !== fake.appleKey.keyId || payload.sub !== fake.clientId) return null;
        fake.clientAuthSeen.push('apple-jwt');
        return fake.clientId;
      } catch {
        return null;
      }
    }
    const basic = /^basic (.+)$/i.exec(authorization ?? '')?.[1];
    if (basic) {
      const [id, secret] = Buffer.from(basic, 'base64').toString().split(':').map((s) => decodeURIComponent(s));
      fake.clientAuthSeen.push('basic');
      return id === fake.clientId && secret === fake.clientSecret ? id : null;
    }
    fake.clientAuthSeen.push('post');
    return body.get('client_id') === fake.clientId && body.get('client_secret') === fake.clientSecret ? fake.clientId : null;
  }

  const issuerPath = opts.issuerPath ?? '/realms/test';
  const { server, url } = await startServer(async (req, u, body, res) => {
    const path = u.pathname.startsWith(issuerPath) ? u.pathname.slice(issuerPath.length) : null;
    if (path === '/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer: fake.issuer,
        authorization_endpoint: `${fake.issuer}/protocol/openid-connect/auth`,
        token_endpoint: `${fake.issuer}/protocol/openid-connect/token`,
        userinfo_endpoint: `${fake.issuer}/protocol/openid-connect/userinfo`,
        jwks_uri: `${fake.issuer}/protocol/openid-connect/certs`,
        response_types_supported: ['code'],
        response_modes_supported: ['query', 'form_post'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: fake.appleKey ? ['client_secret_post'] : ['client_secret_basic', 'client_secret_post'],
        scopes_supported: ['openid', 'email', 'profile', 'name'],
      });
    }
    if (path === '/protocol/openid-connect/certs') return json(res, 200, { keys: [jwk] });
    if (path === '/oauth2/authorize' || path === '/protocol/openid-connect/auth') {
      fake.authorizeRequests.push(new URLSearchParams(u.search));
      const redirectUri = u.searchParams.get('redirect_uri')!;
      const code = newCode();
      grants.set(code, {
        clientId: u.searchParams.get('client_id') ?? '',
        redirectUri,
        codeChallenge: u.searchParams.get('code_challenge'),
        nonce: u.searchParams.get('nonce'),
        user: { ...fake.nextUser },
      });
      const answer = { code, state: u.searchParams.get('state') ?? '' };
      if (u.searchParams.get('response_mode') === 'form_post') return formPostPage(res, redirectUri, { ...answer, ...fake.formPostExtra });
      const back = new URL(redirectUri);
      for (const [k, v] of Object.entries(answer)) back.searchParams.set(k, v);
      res.writeHead(302, { location: back.toString() }).end();
      return;
    }
    if ((path === '/protocol/openid-connect/token' || path === '/api/oauth2/token') && req.method === 'POST') {
      const code = body.get('code') ?? '';
      const grant = grants.get(code);
      grants.delete(code);
      const client = await clientOf(req.headers.authorization, body);
      const valid = grant && client === grant.clientId && body.get('grant_type') === 'authorization_code'
        && body.get('redirect_uri') === grant.redirectUri && pkceMatches(grant.codeChallenge, body.get('code_verifier'))
        && !!grant.codeChallenge;
      if (!valid) return json(res, 400, { error: 'invalid_grant', error_description: 'Bad Request' });
      const token = `at-${newCode()}`;
      tokens.set(token, grant.user);
      if (path === '/api/oauth2/token') return json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 300, scope: 'identify email' });
      return json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 300, id_token: await idToken(grant) });
    }
    if (path === '/api/users/@me') {
      return tokens.has(bearer(req) ?? '') ? json(res, 200, fake.discordUser) : json(res, 401, { message: '401: Unauthorized' });
    }
    if (path === '/protocol/openid-connect/userinfo') {
      const user = tokens.get(bearer(req) ?? '');
      return user ? json(res, 200, user) : json(res, 401, { error: 'invalid_token' });
    }
    return json(res, 404, { error: 'not_found' });
  });
  fake.url = url;
  fake.issuer = `${url}${issuerPath}`;
  fake.close = () => closeServer(server);
  return fake;
}
