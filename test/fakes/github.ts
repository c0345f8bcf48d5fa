/**
 * A fake GitHub on 127.0.0.1: /login/oauth/authorize (consents at once as `nextUser`),
 * /login/oauth/access_token (checks client credentials, redirect URI and PKCE), and the API's
 * /user and /user/emails. Point GITHUB_BASE_URL and GITHUB_API_BASE_URL at `url`.
 */
import { authorize, bearer, closeServer, json, newCode, pkceMatches, startServer, type Grant } from './oauth-common.js';

export interface FakeGithubUser {
  id: number;
  login: string;
  name?: string | null;
  email?: string | null;
  avatar_url?: string;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

export interface FakeGithub {
  url: string;
  clientId: string;
  clientSecret: string;
  nextUser: FakeGithubUser;
  /** When set, the next authorize answers with this error description. */
  denyWith?: string;
  /** When set, GET /user answers with this status (an API outage). */
  userApiStatus?: number;
  tokenRequests: number;
  close(): Promise<void>;
}

export async function startFakeGithub(): Promise<FakeGithub> {
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, FakeGithubUser>();
  const fake: FakeGithub = {
    url: '',
    clientId: 'gh-client-id',
    clientSecret: 'gh-client-secret',
    nextUser: { id: 1001, login: 'octocat', name: 'Octo Cat', emails: [{ email: 'octo@example.com', primary: true, verified: true }] },
    tokenRequests: 0,
    close: async () => {},
  };
  const { server, url } = await startServer((req, u, body, res) => {
    if (u.pathname === '/login/oauth/authorize') {
      const deny = fake.denyWith;
      fake.denyWith = undefined;
      return authorize(u, res, grants, { ...fake.nextUser }, deny);
    }
    if (u.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      fake.tokenRequests++;
      const grant = grants.get(body.get('code') ?? '');
      grants.delete(body.get('code') ?? '');
      const valid = grant && body.get('client_id') === fake.clientId && body.get('client_secret') === fake.clientSecret
        && body.get('redirect_uri') === grant.redirectUri && pkceMatches(grant.codeChallenge, body.get('code_verifier'));
      // Like GitHub: errors come back with status 200 and an `error` member.
      if (!valid) return json(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      const token = `gho_${newCode()}`;
      tokens.set(token, grant.profile as unknown as FakeGithubUser);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const user = tokens.get(bearer(req) ?? '');
    if (!user) return json(res, 401, { message: 'Bad credentials' });
    if (u.pathname === '/user') {
      if (fake.userApiStatus) return json(res, fake.userApiStatus, { message: 'internal detail: db-7.internal.github.net timed out' });
      return json(res, 200, { id: user.id, login: user.login, name: user.name ?? null, email: user.email ?? null, avatar_url: user.avatar_url ?? null });
    }
    if (u.pathname === '/user/emails') return json(res, 200, user.emails);
    return json(res, 404, { message: 'Not Found' });
  });
  fake.url = url;
  fake.close = () => closeServer(server);
  return fake;
}
