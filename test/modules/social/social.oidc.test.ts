/**
 * Sign-in with any OpenID Connect provider, against a fake provider on loopback (discovery,
 * JWKS, token endpoint, form_post): the dashboard settings (secret write-only), the flow end to
 * end (also finished on a second API node), and the threats: an ID token with a wrong `aud`,
 * `iss` or `nonce`, expired, unsigned (`alg: none`), HS256 signed with the client secret, or
 * signed by a key the issuer does not publish; an unverified provider email used to take over
 * an account; a replayed state.
 */
import { generateKeyPair, exportPKCS8 } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot, type Booted } from '../../../src/boot.js';
import { loadConfig } from '../../../src/config.js';
import { buildApp, type App } from '../../../src/server.js';
import { parseFormPost, startFakeOidc, type FakeOidc, type Tamper } from '../../fakes/oidc.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authProject, signup, uniqueEmail, PASSWORD } from '../auth/helpers.js';
import { fragmentToken, jarOf } from './helpers.js';

let env: TestEnv;
let idp: FakeOidc;
let apple: FakeOidc;
let p: TestProject;

async function putProvider(project: TestProject, id: string, body: Record<string, unknown>) {
  return env.app.inject({ method: 'PUT', url: `/api/projects/${project.id}/auth/oidc/${id}`, headers: project.owner.auth, payload: body });
}

beforeAll(async () => {
  idp = await startFakeOidc();
  apple = await startFakeOidc({ issuerPath: '/apple', clientId: 'com.example.app.web' });
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  p = await authProject(env);
  const res = await putProvider(p, 'acme', { preset: 'keycloak', label: 'Acme SSO', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, enabled: true });
  expect(res.statusCode).toBe(200);
});
afterAll(async () => {
  await env.close();
  await idp.close();
  await apple.close();
});

interface Result {
  status: number;
  redirect: URL | null;
  body: string;
  callbackPath: string;
}

/** Browser steps: start on `startApp` → the provider consents → callback on `callbackApp`. */
async function runOidc(provider = 'acme', opts: { startApp?: App; callbackApp?: App; project?: TestProject } = {}): Promise<Result> {
  const startApp = opts.startApp ?? env.app;
  const project = opts.project ?? p;
  const start = await startApp.inject({ method: 'GET', url: `/api/userAuth/social/${provider}/start?key=${project.publishableKey}` });
  expect(start.statusCode, start.body).toBe(302);
  const consent = await fetch(start.headers.location as string, { redirect: 'manual' });
  const cookies = jarOf(start);
  const callbackApp = opts.callbackApp ?? startApp;
  let res;
  let callbackPath: string;
  if (consent.status === 200) {
    // form_post: the browser posts the provider's form (cross-site: no Lax cookie), then follows the 303.
    const { action, fields } = parseFormPost(await consent.text());
    const posted = await callbackApp.inject({ method: 'POST', url: new URL(action).pathname, payload: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(posted.statusCode, posted.body).toBe(303);
    callbackPath = posted.headers.location as string;
    res = await callbackApp.inject({ method: 'GET', url: callbackPath, cookies });
  } else {
    const back = new URL(consent.headers.get('location')!);
    callbackPath = back.pathname + back.search;
    res = await callbackApp.inject({ method: 'GET', url: callbackPath, cookies });
  }
  return { status: res.statusCode, redirect: res.headers.location ? new URL(res.headers.location as string) : null, body: res.body, callbackPath };
}

const userByEmail = (email: string) =>
  env.ctx.db.admin.selectFrom('app_users').selectAll().where('email', '=', email).executeTakeFirst();
const identitiesOf = (userId: string) =>
  env.ctx.db.admin.selectFrom('app_user_identities').selectAll().where('user_id', '=', userId).execute();

describe('dashboard settings', () => {
  it('the client secret is encrypted at rest and never returned', async () => {
    const list = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/auth/oidc`, headers: p.owner.auth });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(idp.clientSecret);
    const acme = list.json().data.providers.find((x: { id: string }) => x.id === 'acme');
    expect(acme).toMatchObject({ preset: 'keycloak', issuer: idp.issuer, clientId: idp.clientId, enabled: true, hasClientSecret: true });
    expect(acme.redirectUri).toMatch(/\/api\/userAuth\/social\/acme\/callback$/);
    expect(list.json().data.presets.map((x: { preset: string }) => x.preset)).toEqual(['oidc', 'apple', 'microsoft', 'gitlab', 'discord', 'keycloak']);
    const row = await env.ctx.db.admin.selectFrom('projects').select(['settings', 'secrets']).where('id', '=', p.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(idp.clientSecret);
    expect((row.secrets as Record<string, unknown>)['oidc:acme']).toBeTruthy();
    const project = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}`, headers: p.owner.auth });
    expect(project.body).not.toContain(idp.clientSecret);
  });

  it('refuses reserved or malformed ids, plain-text scopes without openid, and an undiscoverable issuer', async () => {
    for (const id of ['github', 'google', 'exchange', 'Acme', '1abc']) {
      const res = await putProvider(p, id, { preset: 'oidc', issuer: idp.issuer, clientId: 'x', clientSecret: 'y' });
      expect(res.statusCode, id).toBe(id === 'Acme' || id === '1abc' ? 422 : 422);
      expect(res.json().code).toBe('oidc_provider_invalid');
    }
    const noOpenid = await putProvider(p, 'noscope', { preset: 'oidc', issuer: idp.issuer, clientId: 'x', clientSecret: 'y', scopes: ['email'] });
    expect(noOpenid.json().code).toBe('oidc_provider_invalid');
    const missingIssuer = await putProvider(p, 'kc', { preset: 'keycloak', clientId: 'x', clientSecret: 'y' });
    expect(missingIssuer.json().code).toBe('oidc_provider_invalid');
    const wrongIssuer = await putProvider(p, 'broken', { preset: 'oidc', issuer: `${idp.url}/realms/nope`, clientId: 'x', clientSecret: 'y', enabled: true });
    expect(wrongIssuer.statusCode).toBe(502);
    expect(wrongIssuer.json().code).toBe('oidc_discovery_failed');
    const other = await authProject(env);
    const foreign = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/auth/oidc`, headers: other.owner.auth });
    expect(foreign.statusCode).toBe(404);
  });

  it('an issuer on a private network is refused when private issuers are not allowed (SSRF)', async () => {
    const strict = await createTestEnv({ OIDC_ALLOW_PRIVATE_ISSUERS: 'false' });
    try {
      const sp = await authProject(strict);
      for (const issuer of ['http://127.0.0.1:9/realms/x', 'https://169.254.169.254/latest', 'https://localhost/realms/x', 'https://10.0.0.8/x']) {
        const res = await strict.app.inject({ method: 'PUT', url: `/api/projects/${sp.id}/auth/oidc/corp`, headers: sp.owner.auth, payload: { preset: 'oidc', issuer, clientId: 'x', clientSecret: 'y' } });
        expect(res.statusCode, issuer).toBe(422);
        expect(res.json().code).toBe('oidc_provider_invalid');
      }
    } finally {
      await strict.close();
    }
  });

  it('a disabled or unknown provider cannot start a sign-in', async () => {
    expect((await putProvider(p, 'off', { preset: 'oidc', issuer: idp.issuer, clientId: 'x', clientSecret: 'y' })).statusCode).toBe(200);
    const off = await env.app.inject({ method: 'GET', url: `/api/userAuth/social/off/start?key=${p.publishableKey}` });
    expect(off.statusCode).toBe(422);
    expect(off.json().code).toBe('provider_not_configured');
    const unknown = await env.app.inject({ method: 'GET', url: `/api/userAuth/social/nobody/start?key=${p.publishableKey}` });
    expect(unknown.statusCode).toBe(404);
    const del = await env.app.inject({ method: 'DELETE', url: `/api/projects/${p.id}/auth/oidc/off`, headers: p.owner.auth });
    expect(del.statusCode).toBe(200);
    const again = await env.app.inject({ method: 'DELETE', url: `/api/projects/${p.id}/auth/oidc/off`, headers: p.owner.auth });
    expect(again.statusCode).toBe(404);
    const row = await env.ctx.db.admin.selectFrom('projects').select('secrets').where('id', '=', p.id).executeTakeFirstOrThrow();
    expect(Object.keys(row.secrets as object)).not.toContain('oidc:off');
  });
});

describe('sign-in flow', () => {
  it('start sends state, nonce, PKCE S256 and the openid scope to the discovered endpoint', async () => {
    const res = await env.app.inject({ method: 'GET', url: `/api/userAuth/social/acme/start?key=${p.publishableKey}` });
    expect(res.statusCode).toBe(302);
    const url = new URL(res.headers.location as string);
    expect(url.origin + url.pathname).toBe(`${idp.issuer}/protocol/openid-connect/auth`);
    expect(url.searchParams.get('scope')).toBe('openid email profile');
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe(`${env.config.publicUrl}/api/userAuth/social/acme/callback`);
  });

  it('creates a user from a validated ID token, records the identity, and the rtCode exchange returns the refresh token', async () => {
    const email = uniqueEmail('olga');
    idp.nextUser = { sub: 'kc-100', email, email_verified: true, name: 'Olga', preferred_username: 'olga' };
    const r = await runOidc();
    expect(r.status).toBe(302);
    const url = r.redirect!;
    expect(url.searchParams.get('error')).toBeNull();
    expect(url.searchParams.get('isNewUser')).toBe('true');
    expect(url.searchParams.get('provider')).toBe('acme');
    const user = await userByEmail(email);
    expect(user).toMatchObject({ email_verified: true, auth_providers: ['acme'] });
    expect(await identitiesOf(user!.id)).toMatchObject([{ provider: 'acme', issuer: idp.issuer, subject: 'kc-100' }]);
    expect(idp.clientAuthSeen.at(-1)).toBe('basic');
    const ex = await env.app.inject({ method: 'POST', url: '/api/userAuth/social/exchange', headers: p.pk, payload: { token: fragmentToken(url), rtCode: url.searchParams.get('rtCode') } });
    expect(ex.statusCode).toBe(200);
    const again = await runOidc();
    expect(again.redirect!.searchParams.get('isNewUser')).toBe('false');
    expect(again.redirect!.searchParams.get('userId')).toBe(user!.id);
  });

  it('the callback finishes on a second API node (state in PostgreSQL, not in memory)', async () => {
    let second: Booted | undefined;
    let appB: App | undefined;
    try {
      const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', PLINTH_DATA_DIR: env.config.dataDir, DATABASE_URL: env.databaseUrl, RATE_LIMIT_SCALE: '100' });
      second = await boot(config, { clock: env.clock, skipMigrations: true });
      appB = await buildApp(second.ctx);
      const email = uniqueEmail('twonode');
      idp.nextUser = { sub: 'kc-two-node', email, email_verified: true };
      const r = await runOidc('acme', { startApp: env.app, callbackApp: appB });
      expect(r.redirect!.searchParams.get('error')).toBeNull();
      expect(r.redirect!.searchParams.get('isNewUser')).toBe('true');
      const ex = await env.app.inject({ method: 'POST', url: '/api/userAuth/social/exchange', headers: p.pk, payload: { token: fragmentToken(r.redirect!), rtCode: r.redirect!.searchParams.get('rtCode') } });
      expect(ex.statusCode).toBe(200);
    } finally {
      await appB?.close();
      await second?.close();
    }
  });

  it('a replayed state (the same callback URL again) is refused', async () => {
    idp.nextUser = { sub: 'kc-replay', email: uniqueEmail('replay'), email_verified: true };
    const r = await runOidc();
    expect(r.redirect!.searchParams.get('rtCode')).toBeTruthy();
    const replay = await env.app.inject({ method: 'GET', url: r.callbackPath });
    expect(replay.statusCode).toBe(400);
    expect(replay.json().code).toBe('invalid_state');
  });
});

describe('ID token threats', () => {
  const cases: Array<[Tamper, string]> = [
    ['aud', 'an ID token issued for another client (wrong aud)'],
    ['iss', 'an ID token from another issuer (wrong iss)'],
    ['nonce', 'an ID token with another nonce (replayed into this flow)'],
    ['expired', 'an expired ID token'],
    ['alg-none', 'an unsigned ID token (alg: none)'],
    ['hs256-client-secret', 'an HS256 ID token signed with the client secret where RS256 is expected'],
    ['foreign-key', "an RS256 ID token signed by a key the issuer's JWKS does not hold"],
  ];
  for (const [tamper, what] of cases) {
    it(`${what} is refused: no user, no identity, an error redirect`, async () => {
      const email = uniqueEmail(`t-${tamper}`);
      idp.nextUser = { sub: `kc-${tamper}`, email, email_verified: true };
      idp.tamper = tamper;
      try {
        const r = await runOidc();
        expect(r.status).toBe(302);
        expect(r.redirect!.searchParams.get('error')).toBeTruthy();
        expect(r.redirect!.searchParams.get('rtCode')).toBeNull();
        expect(r.redirect!.hash).toBe('');
        expect(await userByEmail(email)).toBeUndefined();
      } finally {
        idp.tamper = undefined;
      }
    });
  }
});

describe('account linking', () => {
  it("a provider's unverified email cannot take over an existing account", async () => {
    const email = uniqueEmail('victim');
    const { body } = await signup(env, p, { email });
    idp.nextUser = { sub: 'kc-attacker', email, email_verified: false };
    const r = await runOidc();
    expect(r.redirect!.searchParams.get('error')).toMatch(/not verified/);
    expect(r.redirect!.searchParams.get('rtCode')).toBeNull();
    expect(await identitiesOf(body.data.user._id)).toEqual([]);
    const login = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email, password: PASSWORD } });
    expect(login.statusCode).toBe(200);
  });

  it('an email_verified of "false" (a string) does not count as verified', async () => {
    const email = uniqueEmail('strfalse');
    await signup(env, p, { email });
    idp.nextUser = { sub: 'kc-strfalse', email, email_verified: 'false' };
    const r = await runOidc();
    expect(r.redirect!.searchParams.get('error')).toMatch(/not verified/);
  });

  it('a verified email links to the existing account (same user id)', async () => {
    const email = uniqueEmail('linked');
    const { body } = await signup(env, p, { email });
    idp.nextUser = { sub: 'kc-linked', email, email_verified: true };
    const r = await runOidc();
    expect(r.redirect!.searchParams.get('linkedByEmail')).toBe('true');
    expect(r.redirect!.searchParams.get('userId')).toBe(body.data.user._id);
    expect(await identitiesOf(body.data.user._id)).toMatchObject([{ provider: 'acme', subject: 'kc-linked' }]);
  });

  it('the same subject at another issuer is another person', async () => {
    const other = await startFakeOidc({ issuerPath: '/realms/other' });
    try {
      expect((await putProvider(p, 'other', { preset: 'oidc', issuer: other.issuer, clientId: other.clientId, clientSecret: other.clientSecret, enabled: true })).statusCode).toBe(200);
      const email = uniqueEmail('sameSub');
      idp.nextUser = { sub: 'shared-sub', email, email_verified: true };
      const first = await runOidc('acme');
      const otherEmail = uniqueEmail('sameSub2');
      other.nextUser = { sub: 'shared-sub', email: otherEmail, email_verified: true };
      const second = await runOidc('other');
      expect(second.redirect!.searchParams.get('isNewUser')).toBe('true');
      expect(second.redirect!.searchParams.get('userId')).not.toBe(first.redirect!.searchParams.get('userId'));
    } finally {
      await other.close();
    }
  });

  it('Microsoft: an email without xms_edov is not taken as verified (nOAuth)', async () => {
    const ms = await startFakeOidc({ issuerPath: '/tenant-1/v2.0' });
    try {
      expect((await putProvider(p, 'microsoft', { preset: 'microsoft', issuer: ms.issuer, clientId: ms.clientId, clientSecret: ms.clientSecret, enabled: true })).statusCode).toBe(200);
      const email = uniqueEmail('entra');
      const { body } = await signup(env, p, { email });
      ms.nextUser = { sub: 'ms-evil', email, email_verified: true };
      const refused = await runOidc('microsoft');
      expect(refused.redirect!.searchParams.get('error')).toMatch(/not verified/);
      ms.nextUser = { sub: 'ms-good', email, xms_edov: true };
      const linked = await runOidc('microsoft');
      expect(linked.redirect!.searchParams.get('userId')).toBe(body.data.user._id);
    } finally {
      await ms.close();
    }
  });
});

describe('Discord preset (plain OAuth 2.0)', () => {
  it('signs in from the profile API; an unverified Discord email does not link to an account', async () => {
    const discord = await startFakeOidc({ issuerPath: '/discord' });
    try {
      const res = await putProvider(p, 'discord', { preset: 'discord', issuer: discord.issuer, clientId: discord.clientId, clientSecret: discord.clientSecret, enabled: true });
      expect(res.statusCode, res.body).toBe(200);
      const email = uniqueEmail('nelly');
      discord.discordUser = { id: '80351110224678912', username: 'nelly', global_name: 'Nelly', email, verified: true, avatar: 'abc' };
      const r = await runOidc('discord');
      expect(discord.authorizeRequests.at(-1)!.get('scope')).toBe('identify email');
      expect(discord.authorizeRequests.at(-1)!.get('code_challenge_method')).toBe('S256');
      expect(r.redirect!.searchParams.get('error')).toBeNull();
      const user = await userByEmail(email);
      expect(user!.data).toMatchObject({ name: 'Nelly', avatarUrl: 'https://cdn.discordapp.com/avatars/80351110224678912/abc.png' });
      const victim = uniqueEmail('dvictim');
      await signup(env, p, { email: victim });
      discord.discordUser = { id: '99', username: 'mallory', email: victim, verified: false };
      const refused = await runOidc('discord');
      expect(refused.redirect!.searchParams.get('error')).toMatch(/not verified/);
    } finally {
      await discord.close();
    }
  });
});

describe('Apple preset', () => {
  it('form_post callback and a client-secret JWT made from the private key', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    apple.appleKey = { publicKey, teamId: 'TEAM123456', keyId: 'KEY1234567' };
    apple.formPostExtra = { user: JSON.stringify({ name: { firstName: 'Ada', lastName: 'Apple' } }) };
    const pem = await exportPKCS8(privateKey);
    const bad = await putProvider(p, 'apple', { preset: 'apple', issuer: apple.issuer, clientId: apple.clientId, clientSecret: 'not a key', teamId: 'TEAM123456', keyId: 'KEY1234567' });
    expect(bad.json().code).toBe('oidc_provider_invalid');
    const res = await putProvider(p, 'apple', { preset: 'apple', issuer: apple.issuer, clientId: apple.clientId, clientSecret: pem, teamId: 'TEAM123456', keyId: 'KEY1234567', enabled: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain('PRIVATE KEY');
    const email = uniqueEmail('ada');
    apple.nextUser = { sub: '001234.abcdef', email, email_verified: 'true', is_private_email: 'false' };
    const r = await runOidc('apple');
    expect(apple.authorizeRequests.at(-1)!.get('response_mode')).toBe('form_post');
    expect(apple.authorizeRequests.at(-1)!.get('scope')).toBe('openid email name');
    expect(r.redirect!.searchParams.get('error')).toBeNull();
    expect(r.redirect!.searchParams.get('isNewUser')).toBe('true');
    expect(apple.clientAuthSeen.at(-1)).toBe('apple-jwt');
    expect((await userByEmail(email))!.data).toMatchObject({ name: 'Ada Apple' });
  });

  it('a form_post answer without the starting browser\'s cookie is refused (login CSRF)', async () => {
    apple.nextUser = { sub: '001234.csrf', email: uniqueEmail('csrf'), email_verified: true };
    const start = await env.app.inject({ method: 'GET', url: `/api/userAuth/social/apple/start?key=${p.publishableKey}` });
    const consent = await fetch(start.headers.location as string, { redirect: 'manual' });
    const { action, fields } = parseFormPost(await consent.text());
    const posted = await env.app.inject({ method: 'POST', url: new URL(action).pathname, payload: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const res = await env.app.inject({ method: 'GET', url: posted.headers.location as string });
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('OAuth state mismatch');
  });
});
