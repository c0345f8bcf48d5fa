/**
 * "Sign in with GitHub" at the console (docs/operators-and-projects.md "GitHub sign-in") against
 * a fake GitHub on 127.0.0.1: a new operator is created, an existing one is linked by its
 * verified email, an unverified email is refused, a state works once and only in the browser
 * that started it, and an operator with a second factor still has to pass it. Every outcome is
 * a redirect to the console; the client secret and GitHub's token never reach the browser.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../../src/lib/identity/totp.js';
import { startFakeGithub, type FakeGithub } from '../../fakes/github.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { jarOf } from '../social/helpers.js';
import { cookiesOf, freshIp, login, register } from './helpers.js';

let env: TestEnv;
let gh: FakeGithub;
let bare: TestEnv;

beforeAll(async () => {
  gh = await startFakeGithub();
  env = await createTestEnv({
    GITHUB_BASE_URL: gh.url, GITHUB_API_BASE_URL: gh.url, RATE_LIMIT_SCALE: '100', LOG_LEVEL: 'trace',
    OPERATOR_GITHUB_CLIENT_ID: gh.clientId, OPERATOR_GITHUB_CLIENT_SECRET: gh.clientSecret,
  });
  bare = await createTestEnv();
});
afterAll(async () => {
  await env?.close();
  await bare?.close();
  await gh?.close();
});

interface Flow { start: { cookies: Array<{ name: string; value: string }>; headers: Record<string, unknown> }; callbackPath: string; res: Awaited<ReturnType<TestEnv['app']['inject']>>; to: URL }

/** The browser's steps: start → GitHub consents → callback with the cookies /start set (or `jar`). */
async function flow(jar?: Record<string, string>): Promise<Flow> {
  const start = await env.app.inject({ method: 'GET', url: '/api/auth/github/start', remoteAddress: freshIp() });
  expect(start.statusCode).toBe(302);
  const consent = await fetch(start.headers.location as string, { redirect: 'manual' });
  const back = new URL(consent.headers.get('location')!);
  const callbackPath = back.pathname + back.search;
  const res = await env.app.inject({ method: 'GET', url: callbackPath, cookies: jar ?? jarOf(start) });
  expect(res.statusCode).toBe(302);
  return { start, callbackPath, res, to: consoleRoute(res.headers.location as string) };
}

/** The console route a redirect names: `<DASHBOARD_URL>/_/#/<route>?<query>` → URL with pathname = route. */
function consoleRoute(location: string): URL {
  const url = new URL(location);
  expect(url.origin + url.pathname).toBe(`${env.ctx.config.dashboardUrl}/_/`);
  return new URL(url.hash.slice(1), 'console:/');
}

const me = (cookies: Record<string, string>) => env.app.inject({ method: 'GET', url: '/api/auth/me', cookies });

describe('operator GitHub sign-in', () => {
  it('says whether it is configured; without it, start goes back to the console with github_not_configured', async () => {
    expect((await env.app.inject({ method: 'GET', url: '/api/auth/github' })).json().data).toEqual({ enabled: true });
    expect((await bare.app.inject({ method: 'GET', url: '/api/auth/github' })).json().data).toEqual({ enabled: false });
    const res = await bare.app.inject({ method: 'GET', url: '/api/auth/github/start' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`${bare.ctx.config.dashboardUrl}/_/#/login?error=github_not_configured`);
  });

  it('start sends the browser to GitHub with a state, PKCE S256 and the console callback; the state is bound by an HttpOnly cookie', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/auth/github/start', remoteAddress: freshIp() });
    const url = new URL(res.headers.location as string);
    expect(url.origin + url.pathname).toBe(`${gh.url}/login/oauth/authorize`);
    expect(url.searchParams.get('client_id')).toBe(gh.clientId);
    expect(url.searchParams.get('redirect_uri')).toBe(`${env.ctx.config.publicUrl}/api/auth/github/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('scope')).toContain('user:email');
    expect(url.toString()).not.toContain(gh.clientSecret);
    const cookie = res.cookies.find((c) => c.name.startsWith('oauth_'))!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/api/auth/github' });
  });

  it('a new operator: account created with the verified primary email, signed in, sent to the projects', async () => {
    gh.nextUser = { id: 4101, login: 'newop', name: 'New Op', emails: [
      { email: 'other@example.com', primary: false, verified: true },
      { email: 'New.Op@Example.com', primary: true, verified: true },
    ] };
    const f = await flow();
    expect(f.to.pathname).toBe('/projects');
    expect(f.to.searchParams.get('welcome')).toBe('github');
    const jar = cookiesOf(f.res);
    expect(jar.accessToken).toBeTruthy();
    const user = (await me(jar)).json().data.user;
    expect(user).toMatchObject({ email: 'new.op@example.com', name: 'New Op', isVerified: true });
    expect(f.res.headers.location).not.toContain(jar.accessToken!);
    const sessions = (await env.app.inject({ method: 'GET', url: '/api/auth/sessions', cookies: jar })).json().data.sessions;
    expect(sessions[0].methods).toEqual(['oauth']);
    // Signing in again finds the same operator by the link, not a second account.
    const again = await flow();
    expect(again.to.searchParams.get('welcome')).toBeNull();
    expect((await me(cookiesOf(again.res))).json().data.user._id).toBe(user._id);
  });

  it('an existing operator with that verified email is linked and signed in (their password still works)', async () => {
    await register(env, 'ada@example.com');
    gh.nextUser = { id: 4102, login: 'ada', emails: [{ email: 'ada@example.com', primary: true, verified: true }] };
    const f = await flow();
    expect(f.to.pathname).toBe('/projects');
    const user = (await me(cookiesOf(f.res))).json().data.user;
    expect(user.email).toBe('ada@example.com');
    const link = await env.ctx.db.admin.selectFrom('operator_identities').selectAll().where('subject', '=', '4102').executeTakeFirstOrThrow();
    expect(link.operator_id).toBe(user._id);
    expect((await login(env, 'ada@example.com')).statusCode).toBe(200);
    // GitHub's address changes later: the link still names the operator.
    gh.nextUser = { id: 4102, login: 'ada', emails: [{ email: 'ada@new.example.com', primary: true, verified: true }] };
    expect((await me(cookiesOf((await flow()).res))).json().data.user._id).toBe(user._id);
  });

  it('refuses a GitHub account without a verified email: no account, no session', async () => {
    gh.nextUser = { id: 4103, login: 'unverified', email: 'unverified@example.com', emails: [{ email: 'unverified@example.com', primary: true, verified: false }] };
    const f = await flow();
    expect(f.to.pathname).toBe('/login');
    expect(f.to.searchParams.get('error')).toBe('github_email_unverified');
    expect(cookiesOf(f.res).accessToken).toBeUndefined();
    const row = await env.ctx.db.admin.selectFrom('operators').select('id').where('email', '=', 'unverified@example.com').executeTakeFirst();
    expect(row).toBeUndefined();
  });

  it('a state works once: replaying the callback URL is refused; another browser (no cookie) is refused', async () => {
    gh.nextUser = { id: 4104, login: 'replay', emails: [{ email: 'replay@example.com', primary: true, verified: true }] };
    const f = await flow();
    expect(f.to.pathname).toBe('/projects');
    const replay = await env.app.inject({ method: 'GET', url: f.callbackPath, cookies: jarOf(f.start) });
    expect(consoleRoute(replay.headers.location as string).searchParams.get('error')).toBe('github_state_invalid');
    expect(cookiesOf(replay).accessToken).toBeUndefined();
    const other = await flow({});
    expect(other.to.searchParams.get('error')).toBe('github_state_invalid');
    expect(cookiesOf(other.res).accessToken).toBeUndefined();
    // …and that attempt spent its state: the right browser cannot use it afterwards either.
    const late = await env.app.inject({ method: 'GET', url: other.callbackPath, cookies: jarOf(other.start) });
    expect(consoleRoute(late.headers.location as string).searchParams.get('error')).toBe('github_state_invalid');
    const expired = await env.app.inject({ method: 'GET', url: '/api/auth/github/start', remoteAddress: freshIp() });
    const consent = await fetch(expired.headers.location as string, { redirect: 'manual' });
    env.clock.advance(11 * 60_000);
    const back = new URL(consent.headers.get('location')!);
    const res = await env.app.inject({ method: 'GET', url: back.pathname + back.search, cookies: jarOf(expired) });
    expect(consoleRoute(res.headers.location as string).searchParams.get('error')).toBe('github_state_invalid');
  });

  it('a cancelled consent goes back with github_denied', async () => {
    gh.denyWith = 'The user has denied your application access.';
    const f = await flow();
    expect(f.to.searchParams.get('error')).toBe('github_denied');
  });

  it('an operator with a second factor gets the challenge, not a session, and completes it with the app', async () => {
    const reg = await register(env, 'mfa@example.com');
    expect(reg.statusCode).toBe(201);
    const jar = cookiesOf(await login(env, 'mfa@example.com'));
    const csrf = { 'x-csrf-token': jar.csrfToken! };
    const enrol = await env.app.inject({ method: 'POST', url: '/api/auth/mfa/totp/enroll', cookies: jar, headers: csrf });
    const secret = enrol.json().data.secret as string;
    const confirm = await env.app.inject({ method: 'POST', url: '/api/auth/mfa/totp/confirm', cookies: jar, headers: csrf, payload: { code: totpCode(secret, env.clock.now()) } });
    expect(confirm.statusCode).toBe(200);
    env.clock.advance(31_000);

    gh.nextUser = { id: 4105, login: 'mfa', emails: [{ email: 'mfa@example.com', primary: true, verified: true }] };
    const f = await flow();
    expect(f.to.pathname).toBe('/login');
    expect(f.to.searchParams.get('methods')).toBe('totp,recovery_code');
    expect(cookiesOf(f.res).accessToken).toBeUndefined();
    const challengeId = f.to.searchParams.get('challengeId')!;
    const done = await env.app.inject({ method: 'POST', url: '/api/auth/mfa/verify', payload: { challengeId, code: totpCode(secret, env.clock.now()) } });
    expect(done.statusCode).toBe(200);
    const sessions = (await env.app.inject({ method: 'GET', url: '/api/auth/sessions', headers: { authorization: `Bearer ${done.json().data.token}` } })).json().data.sessions;
    const current = sessions.find((s: { current: boolean }) => s.current);
    expect(current).toMatchObject({ aal: 'aal2', methods: ['oauth', 'totp'] });
  });

  it("never logs or returns the client secret or GitHub's token; GitHub failing is github_sign_in_failed, its details kept out of the URL", async () => {
    gh.nextUser = { id: 4106, login: 'quiet', emails: [{ email: 'quiet@example.com', primary: true, verified: true }] };
    const f = await flow();
    expect(f.to.pathname).toBe('/projects');
    gh.userApiStatus = 500;
    const failed = await flow();
    gh.userApiStatus = undefined;
    expect(failed.to.searchParams.get('error')).toBe('github_sign_in_failed');
    expect(failed.res.headers.location).not.toContain('internal');
    const seen = [f.res.body, String(f.res.headers.location), JSON.stringify(f.res.headers), failed.res.body, ...env.logs].join('\n');
    expect(env.logs.some((l) => l.includes('operator GitHub sign-in failed'))).toBe(true);
    expect(seen).not.toContain(gh.clientSecret);
    expect(seen).not.toContain('gho_');
  });
});
