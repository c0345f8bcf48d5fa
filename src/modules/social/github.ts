/** GitHub: code exchange (PKCE) with oauth4webapi, then /user and /user/emails. */
import * as oauth from 'oauth4webapi';
import type { AppContext } from '../../context.js';
import { codeGrant, httpOptions, providerEmail, type Credentials, type SocialProfile } from './providers.js';

interface GithubUser {
  id: number | string;
  login?: string;
  name?: string | null;
  email?: string | null;
  avatar_url?: string | null;
}

interface GithubEmail {
  email: string;
  primary?: boolean;
  verified?: boolean;
}

async function getJson<T>(ctx: AppContext, accessToken: string, path: string): Promise<T> {
  const headers = new Headers({ accept: 'application/vnd.github+json', 'user-agent': 'plinth' });
  const url = new URL(`${ctx.config.oauth.githubApiBaseUrl}${path}`);
  const res = await oauth.protectedResourceRequest(accessToken, 'GET', url, headers, null, httpOptions(ctx));
  if (!res.ok) throw new Error(`GitHub API ${path} answered ${res.status}`);
  return (await res.json()) as T;
}

/** The primary verified address, else any verified one, else the (unverified) profile email. */
function pickEmail(user: GithubUser, emails: GithubEmail[]): { email: string | null; verified: boolean } {
  const verified = emails.find((e) => e.primary && e.verified) ?? emails.find((e) => e.verified);
  if (verified) return { email: verified.email, verified: true };
  return { email: user.email ?? null, verified: false };
}

/** `redirect`: the callback the flow started with, when it is not a project's social callback (the console's sign-in). */
export async function githubProfile(ctx: AppContext, creds: Credentials, params: URLSearchParams, verifier: string, redirect?: string): Promise<SocialProfile> {
  const client: oauth.Client = { client_id: creds.clientId };
  const { as, res } = await codeGrant(ctx, 'github', client, creds, params, verifier, redirect);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
  const user = await getJson<GithubUser>(ctx, tokens.access_token, '/user');
  const emails = await getJson<GithubEmail[]>(ctx, tokens.access_token, '/user/emails').catch(() => []);
  const { email, verified } = pickEmail(user, Array.isArray(emails) ? emails : []);
  return {
    providerId: String(user.id),
    email: providerEmail(email),
    emailVerified: verified,
    name: user.name ?? user.login ?? null,
    username: user.login ?? null,
    avatarUrl: user.avatar_url ?? null,
  };
}
