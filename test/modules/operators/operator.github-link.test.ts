/**
 * Linking and unlinking GitHub from the Account screen (docs/operators-and-projects.md "GitHub
 * sign-in"), against a fake GitHub on 127.0.0.1. Threats: GitHub sign-in with the account's
 * email silently linking an account whose owner unlinked GitHub (a compromised GitHub account
 * must be cut off for good); another site starting a link to whatever GitHub account its
 * victim's browser is signed in to (the link starts with a CSRF-checked POST, never a GET); one
 * GitHub account linked to two operators.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../../src/lib/identity/totp.js';
import { startFakeGithub, type FakeGithub } from '../../fakes/github.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { jarOf } from '../social/helpers.js';
import { cookiesOf, freshIp, login, register } from './helpers.js';

let env: TestEnv;
let gh: FakeGithub;

beforeAll(async () => {
  gh = await startFakeGithub();
  env = await createTestEnv({
    GITHUB_BASE_URL: gh.url, GITHUB_API_BASE_URL: gh.url, RATE_LIMIT_SCALE: '100',
    OPERATOR_GITHUB_CLIENT_ID: gh.clientId, OPERATOR_GITHUB_CLIENT_SECRET: gh.clientSecret,
  });
});
afterAll(async () => {
  await env?.close();
  await gh?.close();
});

/** `<DASHBOARD_URL>/_/#/<route>?<query>` → URL whose pathname is the route. */
const consoleRoute = (location: string) => new URL(new URL(location).hash.slice(1), 'console:/');

/** GitHub consents, the browser comes back with the cookies of the response that started it. */
async function complete(started: { cookies: Array<{ name: string; value: string }> }, githubUrl: string) {
  const consent = await fetch(githubUrl, { redirect: 'manual' });
  const back = new URL(consent.headers.get('location')!);
  const res = await env.app.inject({ method: 'GET', url: back.pathname + back.search, cookies: jarOf(started) });
  expect(res.statusCode).toBe(302);
  return { res, to: consoleRoute(res.headers.location as string) };
}

async function signInWithGithub() {
  const start = await env.app.inject({ method: 'GET', url: '/api/auth/github/start', remoteAddress: freshIp() });
  return complete(start, start.headers.location as string);
}

async function account(email: string) {
  expect((await register(env, email)).statusCode).toBe(201);
  const jar = cookiesOf(await login(env, email));
  return { jar, csrf: { 'x-csrf-token': jar.csrfToken! } };
}

async function linkFromAccount(a: { jar: Record<string, string>; csrf: Record<string, string> }) {
  const res = await env.app.inject({ method: 'POST', url: '/api/auth/github/link', cookies: a.jar, headers: a.csrf });
  expect(res.statusCode, res.body).toBe(200);
  return complete(res, res.json().data.url as string);
}

const identities = (a: { jar: Record<string, string> }) => env.app.inject({ method: 'GET', url: '/api/auth/identities', cookies: a.jar });
const unlink = (a: { jar: Record<string, string>; csrf: Record<string, string> }) =>
  env.app.inject({ method: 'DELETE', url: '/api/auth/identities/github', cookies: a.jar, headers: a.csrf });

describe('linking and unlinking GitHub from the account', () => {
  it('lists the link, unlinks it, and a later GitHub sign-in with the same email does not link it again', async () => {
    const a = await account('unlink@example.com');
    gh.nextUser = { id: 5101, login: 'unlinker', emails: [{ email: 'unlink@example.com', primary: true, verified: true }] };
    expect((await signInWithGithub()).to.pathname).toBe('/projects'); // linked by email
    const listed = (await identities(a)).json().data.identities;
    expect(listed).toEqual([{ provider: 'github', email: 'unlink@example.com', linkedAt: expect.any(String), lastSignInAt: expect.any(String) }]);

    expect((await unlink(a)).statusCode).toBe(200);
    expect((await identities(a)).json().data.identities).toEqual([]);
    gh.nextUser = { id: 5101, login: 'unlinker', emails: [{ email: 'unlink@example.com', primary: true, verified: true }] };
    const again = await signInWithGithub();
    expect(again.to.pathname).toBe('/login');
    expect(again.to.searchParams.get('error')).toBe('github_unlinked');
    expect(cookiesOf(again.res).accessToken).toBeUndefined();
    expect((await identities(a)).json().data.identities).toEqual([]);
    // The password still signs in.
    expect((await login(env, 'unlink@example.com')).statusCode).toBe(200);
    // Nothing left to unlink.
    const none = await unlink(a);
    expect([none.statusCode, none.json().code]).toEqual([404, 'identity_not_found']);
  });

  it('links GitHub from the account (any GitHub address), back at the Account screen; sign-in with it works again', async () => {
    const a = await account('relink@example.com');
    gh.nextUser = { id: 5102, login: 'relinker', emails: [{ email: 'someone.else@example.org', primary: true, verified: true }] };
    const linked = await linkFromAccount(a);
    expect(linked.to.pathname).toBe('/account');
    expect(linked.to.searchParams.get('linked')).toBe('github');
    expect(cookiesOf(linked.res).accessToken).toBeUndefined(); // linking signs nobody in
    expect((await identities(a)).json().data.identities).toMatchObject([{ provider: 'github', email: 'someone.else@example.org' }]);
    gh.nextUser = { id: 5102, login: 'relinker', emails: [{ email: 'someone.else@example.org', primary: true, verified: true }] };
    const signIn = await signInWithGithub();
    expect(signIn.to.pathname).toBe('/projects');
    const user = (await env.app.inject({ method: 'GET', url: '/api/auth/me', cookies: cookiesOf(signIn.res) })).json().data.user;
    expect(user.email).toBe('relink@example.com');
  });

  it('refuses a GitHub account already linked to another operator, and a second GitHub account', async () => {
    const owner = await account('first-holder@example.com');
    gh.nextUser = { id: 5103, login: 'taken', emails: [{ email: 'taken@example.org', primary: true, verified: true }] };
    expect((await linkFromAccount(owner)).to.searchParams.get('linked')).toBe('github');
    const other = await account('second-holder@example.com');
    gh.nextUser = { id: 5103, login: 'taken', emails: [{ email: 'taken@example.org', primary: true, verified: true }] };
    const taken = await linkFromAccount(other);
    expect([taken.to.pathname, taken.to.searchParams.get('error')]).toEqual(['/account', 'github_identity_taken']);
    gh.nextUser = { id: 5104, login: 'second', emails: [{ email: 'second@example.org', primary: true, verified: true }] };
    const second = await linkFromAccount(owner);
    expect(second.to.searchParams.get('error')).toBe('github_already_linked');
    expect((await identities(other)).json().data.identities).toEqual([]);
    expect((await identities(owner)).json().data.identities).toMatchObject([{ email: 'taken@example.org' }]);
  });

  it('a link starts only with a CSRF-checked POST by a signed-in operator; no GET starts one', async () => {
    const a = await account('csrf-link@example.com');
    const noCsrf = await env.app.inject({ method: 'POST', url: '/api/auth/github/link', cookies: a.jar });
    expect(noCsrf.statusCode).toBe(403);
    const anonymous = await env.app.inject({ method: 'POST', url: '/api/auth/github/link' });
    expect(anonymous.statusCode).toBe(401);
    expect((await env.app.inject({ method: 'GET', url: '/api/auth/github/link', cookies: a.jar })).statusCode).toBe(404);
    const noUnlinkCsrf = await env.app.inject({ method: 'DELETE', url: '/api/auth/identities/github', cookies: a.jar });
    expect(noUnlinkCsrf.statusCode).toBe(403);
    const badProvider = await env.app.inject({ method: 'DELETE', url: '/api/auth/identities/gitlab', cookies: a.jar, headers: a.csrf });
    expect(badProvider.statusCode).toBe(400);
  });

  it('an operator with a second factor must be in an aal2 session to link or unlink', async () => {
    const a = await account('link-mfa@example.com');
    const enrol = await env.app.inject({ method: 'POST', url: '/api/auth/mfa/totp/enroll', cookies: a.jar, headers: a.csrf });
    const secret = enrol.json().data.secret as string;
    const confirm = await env.app.inject({ method: 'POST', url: '/api/auth/mfa/totp/confirm', cookies: a.jar, headers: a.csrf, payload: { code: totpCode(secret, env.clock.now()) } });
    expect(confirm.statusCode).toBe(200);
    // The password-only session it enrolled from is still aal1.
    const link = await env.app.inject({ method: 'POST', url: '/api/auth/github/link', cookies: a.jar, headers: a.csrf });
    expect([link.statusCode, link.json().code]).toEqual([403, 'mfa_required']);
    const del = await unlink(a);
    expect([del.statusCode, del.json().code]).toEqual([403, 'mfa_required']);
  });
});
