/**
 * A guest links an OpenID Connect identity to its own user id (docs/auth.md "Anonymous users",
 * src/modules/social/link.ts), through the fake provider on loopback: the same user id and
 * documents afterwards, and the threats: an identity that belongs to another user (account
 * takeover), a provider's unverified email matching another account (merge), a verified one
 * matching another account, a link state presented by another user, in another project or
 * from another browser (account-linking CSRF), a link state used as a sign-in, and the callback
 * on a second API node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot, type Booted } from '../../../src/boot.js';
import { loadConfig } from '../../../src/config.js';
import { buildApp, type App } from '../../../src/server.js';
import { signOperatorToken } from '../../../src/modules/operators/tokens.js';
import { startFakeOidc, type FakeOidc, type FakeOidcUser } from '../../fakes/oidc.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeCollection, type TestProject } from '../../helpers/fixtures.js';
import { authProject, PASSWORD, refresh, signup, uniqueEmail } from '../auth/helpers.js';
import { bearer, claimsOf } from '../mfa/helpers.js';
import { jarOf } from './helpers.js';

let env: TestEnv;
let idp: FakeOidc;
let p: TestProject;
let q: TestProject;

async function setUp(project: TestProject): Promise<void> {
  const auth = { authorization: `Bearer ${await signOperatorToken(env.ctx.config.dashboardJwtSecret, project.owner.id, env.clock.now())}` };
  expect((await env.app.inject({ method: 'PATCH', url: `/api/projects/${project.id}`, headers: auth, payload: { allowAnonymous: true } })).statusCode).toBe(200);
  const put = await env.app.inject({
    method: 'PUT', url: `/api/projects/${project.id}/auth/oidc/acme`, headers: project.owner.auth,
    payload: { preset: 'keycloak', label: 'Acme SSO', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, enabled: true },
  });
  expect(put.statusCode, put.body).toBe(200);
  await makeCollection(env.ctx, project.id, 'notes', [{ key: 'text', type: 'String' }], { enabled: true, mode: 'private' });
}

beforeAll(async () => {
  idp = await startFakeOidc();
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  p = await authProject(env);
  q = await authProject(env);
  await setUp(p);
  await setUp(q);
});
afterAll(async () => {
  await env.close();
  await idp.close();
});

interface Guest { id: string; accessToken: string; refreshToken: string }

async function guest(project = p): Promise<Guest> {
  const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/anonymous', headers: { ...project.pk, 'x-refresh-token-mode': 'header' } });
  expect(res.statusCode, res.body).toBe(201);
  const d = res.json().data;
  return { id: d.user._id, accessToken: d.accessToken, refreshToken: d.refreshToken };
}

const note = (project: TestProject, token: string, text: string) =>
  env.app.inject({ method: 'POST', url: '/api/data/notes', headers: bearer(project, token), payload: { text } });
const myNotes = async (project: TestProject, token: string) =>
  (await env.app.inject({ method: 'GET', url: '/api/data/notes', headers: bearer(project, token) })).json().data.items.map((n: { text: string }) => n.text);

const startLink = (token: string, project = p, app: App = env.app) =>
  app.inject({ method: 'POST', url: '/api/userAuth/social/acme/link', headers: bearer(project, token) });

/**
 * The browser's part: open the provider URL the app got, consent as `user`, come back through
 * the callback (on `callbackApp`, no cookie: a link carries none) to the site. Returns the
 * site URL the browser lands on.
 */
async function consent(providerUrl: string, user: FakeOidcUser, callbackApp: App = env.app): Promise<URL> {
  idp.nextUser = user;
  const res = await fetch(providerUrl, { redirect: 'manual' });
  const back = new URL(res.headers.get('location')!);
  const cb = await callbackApp.inject({ method: 'GET', url: back.pathname + back.search });
  expect(cb.statusCode, cb.body).toBe(302);
  return new URL(cb.headers.location as string);
}

/** The app's part on `<siteUrl>/auth/callback?link=…`: post what came back, with a user's token. */
const finishWith = (site: URL, token: string, project = p, app: App = env.app) => {
  const payload: Record<string, string> = {};
  for (const k of ['state', 'code', 'iss', 'user']) if (site.searchParams.get(k)) payload[k] = site.searchParams.get(k)!;
  return app.inject({ method: 'POST', url: `/api/userAuth/social/${site.searchParams.get('link')}/link/finish`, headers: bearer(project, token), payload });
};

async function linkAs(g: Guest, user: FakeOidcUser) {
  const start = await startLink(g.accessToken);
  expect(start.statusCode, start.body).toBe(200);
  return finishWith(await consent(start.json().data.url, user), g.accessToken);
}

/** A normal sign-in with the provider (start → consent → callback with the browser's cookie). */
async function signInWithAcme(user: FakeOidcUser): Promise<URL> {
  const start = await env.app.inject({ method: 'GET', url: `/api/userAuth/social/acme/start?key=${p.publishableKey}` });
  idp.nextUser = user;
  const res = await fetch(start.headers.location as string, { redirect: 'manual' });
  const back = new URL(res.headers.get('location')!);
  const cb = await env.app.inject({ method: 'GET', url: back.pathname + back.search, cookies: jarOf(start) });
  return new URL(cb.headers.location as string);
}

const userRow = (id: string) =>
  env.ctx.db.admin.selectFrom('app_users').select(['id', 'email', 'email_verified', 'is_anonymous', 'auth_providers']).where('id', '=', id).executeTakeFirst();
const identityOwner = (subject: string) =>
  env.ctx.db.admin.selectFrom('app_user_identities').select('user_id').where('subject', '=', subject).execute();

describe('a guest links an OpenID Connect identity', () => {
  it('keeps its user id and documents, gets the verified email, stops being anonymous, and signs back in with the provider', async () => {
    const g = await guest();
    expect((await note(p, g.accessToken, 'guest note')).statusCode).toBe(201);
    const start = await startLink(g.accessToken);
    expect(start.statusCode, start.body).toBe(200);
    const url = new URL(start.json().data.url);
    expect(url.origin + url.pathname).toBe(`${idp.issuer}/protocol/openid-connect/auth`);
    expect(url.searchParams.get('redirect_uri')).toBe(`${env.config.publicUrl}/api/userAuth/social/acme/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('nonce')).toBeTruthy();
    // No browser-binding cookie: the guest's token binds the link.
    expect(start.cookies).toEqual([]);

    const email = uniqueEmail('guestlink');
    const site = await consent(start.json().data.url, { sub: 'kc-guest-1', email, email_verified: true, name: 'Gina' });
    expect(site.origin + site.pathname).toBe('http://localhost:5173/auth/callback');
    expect(site.searchParams.get('link')).toBe('acme');
    expect(site.searchParams.get('rtCode')).toBeNull();
    expect(site.hash).toBe('');

    const res = await finishWith(site, g.accessToken);
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data.user).toMatchObject({ _id: g.id, email, emailVerified: true, isAnonymous: false });
    expect(claimsOf(data.accessToken)).toMatchObject({ userId: g.id, isAnonymous: false });
    expect(await userRow(g.id)).toMatchObject({ email, email_verified: true, is_anonymous: false, auth_providers: ['acme'] });
    expect(await identityOwner('kc-guest-1')).toEqual([{ user_id: g.id }]);
    // The guest's refresh token goes on, for a user who is no longer anonymous.
    expect(claimsOf((await refresh(env, p, g.refreshToken)).json().data.accessToken).isAnonymous).toBe(false);

    // Later, on another device: signing in with the provider lands in the same user and documents.
    const back = await signInWithAcme({ sub: 'kc-guest-1', email, email_verified: true });
    expect(back.searchParams.get('error')).toBeNull();
    expect(back.searchParams.get('userId')).toBe(g.id);
    expect(back.searchParams.get('isNewUser')).toBe('false');
    const token = new URLSearchParams(back.hash.slice(1)).get('token')!;
    expect(await myNotes(p, token)).toEqual(['guest note']);
  });

  it('a user who is not a guest cannot start a link (409), nor can a caller without a token (401)', async () => {
    const { body } = await signup(env, p);
    const res = await startLink(body.data.accessToken);
    expect([res.statusCode, res.json().code]).toEqual([409, 'user_not_anonymous']);
    const none = await env.app.inject({ method: 'POST', url: '/api/userAuth/social/acme/link', headers: p.pk });
    expect(none.statusCode).toBe(401);
    const unknown = await env.app.inject({ method: 'POST', url: '/api/userAuth/social/nobody/link', headers: bearer(p, (await guest()).accessToken) });
    expect(unknown.statusCode).toBe(404);
  });

  it('a guest disabled by the operator cannot link, before or after the provider (403 user_disabled)', async () => {
    const g = await guest();
    const start = await startLink(g.accessToken);
    const site = await consent(start.json().data.url, { sub: 'kc-disabled', email: uniqueEmail('disabled'), email_verified: true });
    await env.ctx.db.admin.updateTable('app_users').set({ disabled_at: env.clock.now() }).where('id', '=', g.id).execute();
    const finish = await finishWith(site, g.accessToken);
    expect([finish.statusCode, finish.json().code]).toEqual([403, 'user_disabled']);
    const again = await startLink(g.accessToken);
    expect([again.statusCode, again.json().code]).toEqual([403, 'user_disabled']);
    expect(await identityOwner('kc-disabled')).toEqual([]);
  });

  it('a guest that already linked cannot finish a second link (409 user_not_anonymous)', async () => {
    const g = await guest();
    const start1 = await startLink(g.accessToken);
    const start2 = await startLink(g.accessToken);
    const first = await finishWith(await consent(start1.json().data.url, { sub: 'kc-twice-1', email: uniqueEmail('twice'), email_verified: true }), g.accessToken);
    expect(first.statusCode).toBe(200);
    const second = await finishWith(await consent(start2.json().data.url, { sub: 'kc-twice-2', email: uniqueEmail('twice'), email_verified: true }), g.accessToken);
    expect([second.statusCode, second.json().code]).toEqual([409, 'user_not_anonymous']);
    expect(await identityOwner('kc-twice-2')).toEqual([]);
  });
});

describe('threats', () => {
  it("takeover: linking an identity that already belongs to another user is refused; that user keeps it, the guest stays a guest", async () => {
    const email = uniqueEmail('owner');
    const owner = await signInWithAcme({ sub: 'kc-owner', email, email_verified: true });
    const ownerId = owner.searchParams.get('userId')!;
    const g = await guest();
    const res = await linkAs(g, { sub: 'kc-owner', email, email_verified: true });
    expect([res.statusCode, res.json().code]).toEqual([409, 'identity_taken']);
    expect(await identityOwner('kc-owner')).toEqual([{ user_id: ownerId }]);
    expect(await userRow(g.id)).toMatchObject({ email: null, is_anonymous: true });
    // Even with another email at the provider now, the identity (issuer + subject) is the owner's.
    const again = await linkAs(await guest(), { sub: 'kc-owner', email: uniqueEmail('changed'), email_verified: true });
    expect(again.json().code).toBe('identity_taken');
    expect((await signInWithAcme({ sub: 'kc-owner', email, email_verified: true })).searchParams.get('userId')).toBe(ownerId);
  });

  it("a provider's unverified email matching another account is not merged into it, and not even linked to the guest", async () => {
    const { body } = await signup(env, p);
    const victim = body.data.user;
    const g = await guest();
    expect((await note(p, g.accessToken, 'mine')).statusCode).toBe(201);
    const res = await linkAs(g, { sub: 'kc-unverified', email: victim.email, email_verified: false });
    expect([res.statusCode, res.json().code]).toEqual([403, 'email_not_verified']);
    expect(await identityOwner('kc-unverified')).toEqual([]);
    expect(await userRow(victim._id)).toMatchObject({ email: victim.email, is_anonymous: false, auth_providers: [] });
    expect(await userRow(g.id)).toMatchObject({ email: null, is_anonymous: true });
    const login = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email: victim.email, password: PASSWORD } });
    expect(login.json().data.user._id).toBe(victim._id);
    expect(await myNotes(p, login.json().data.accessToken)).toEqual([]);
    // An unverified email nobody holds does not link either (as for sign-in).
    const unheld = await linkAs(g, { sub: 'kc-unverified-2', email: uniqueEmail('free'), email_verified: false });
    expect(unheld.json().code).toBe('email_not_verified');
  });

  it('a verified provider email held by another account is refused too (409): the guest is never merged into an existing account', async () => {
    const { body } = await signup(env, p);
    const g = await guest();
    const res = await linkAs(g, { sub: 'kc-verified-taken', email: body.data.user.email, email_verified: true });
    expect([res.statusCode, res.json().code]).toEqual([409, 'email_taken']);
    expect(await identityOwner('kc-verified-taken')).toEqual([]);
    expect(await userRow(body.data.user._id)).toMatchObject({ auth_providers: [] });
    expect(await userRow(g.id)).toMatchObject({ is_anonymous: true });
  });

  it('a link state presented by another user is refused and spent: nothing is linked to either', async () => {
    const alice = await guest();
    const mallory = await guest();
    const start = await startLink(alice.accessToken);
    const site = await consent(start.json().data.url, { sub: 'kc-alice', email: uniqueEmail('alice'), email_verified: true });
    const stolen = await finishWith(site, mallory.accessToken);
    expect([stolen.statusCode, stolen.json().code]).toEqual([403, 'link_state_mismatch']);
    const late = await finishWith(site, alice.accessToken);
    expect([late.statusCode, late.json().code]).toEqual([400, 'invalid_state']);
    expect(await identityOwner('kc-alice')).toEqual([]);
    expect(await userRow(mallory.id)).toMatchObject({ is_anonymous: true });
  });

  it("a link state presented in another project is refused (invisible there) and stays its own project's", async () => {
    const g = await guest(p);
    const other = await guest(q);
    const start = await startLink(g.accessToken);
    const site = await consent(start.json().data.url, { sub: 'kc-project', email: uniqueEmail('proj'), email_verified: true });
    const foreign = await finishWith(site, other.accessToken, q);
    expect([foreign.statusCode, foreign.json().code]).toEqual([400, 'invalid_state']);
    const own = await finishWith(site, g.accessToken, p);
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json().data.user._id).toBe(g.id);
  });

  it("another browser (account-linking CSRF): a victim who follows the attacker's provider URL does not link the victim's identity to the attacker's guest", async () => {
    const attacker = await guest();
    const victim = await guest();
    const start = await startLink(attacker.accessToken);
    // The victim's browser opens the attacker's provider URL and consents as the victim; the
    // victim's app, on its callback page, finishes with the victim's own token.
    const site = await consent(start.json().data.url, { sub: 'kc-victim', email: uniqueEmail('victim'), email_verified: true });
    const res = await finishWith(site, victim.accessToken);
    expect([res.statusCode, res.json().code]).toEqual([403, 'link_state_mismatch']);
    // Without a token, nothing happens at all; the callback itself never signs anyone in.
    const anonymousFinish = await env.app.inject({ method: 'POST', url: '/api/userAuth/social/acme/link/finish', headers: p.pk, payload: { state: 'x', code: 'y' } });
    expect(anonymousFinish.statusCode).toBe(401);
    expect(site.searchParams.get('rtCode')).toBeNull();
    expect(await identityOwner('kc-victim')).toEqual([]);
    expect(await userRow(attacker.id)).toMatchObject({ is_anonymous: true, email: null });
  });

  it('a link state is no sign-in state: the sign-in finish (browser cookie) never runs for it, and a sign-in state cannot finish a link', async () => {
    const g = await guest();
    const start = await startLink(g.accessToken);
    const site = await consent(start.json().data.url, { sub: 'kc-kind', email: uniqueEmail('kind'), email_verified: true });
    expect(site.searchParams.get('userId')).toBeNull();
    // A sign-in state given to the link finish.
    const signInStart = await env.app.inject({ method: 'GET', url: `/api/userAuth/social/acme/start?key=${p.publishableKey}` });
    idp.nextUser = { sub: 'kc-kind-2', email: uniqueEmail('kind2'), email_verified: true };
    const res = await fetch(signInStart.headers.location as string, { redirect: 'manual' });
    const back = new URL(res.headers.get('location')!);
    const wrongKind = await finishWith(new URL(`http://x/?link=acme&state=${back.searchParams.get('state')}&code=${back.searchParams.get('code')}`), g.accessToken);
    expect([wrongKind.statusCode, wrongKind.json().code]).toEqual([400, 'invalid_state']);
    // The link itself still finishes.
    expect((await finishWith(site, g.accessToken)).statusCode).toBe(200);
  });

  it('the callback and the finish work on a second API node (state in PostgreSQL)', async () => {
    let second: Booted | undefined;
    let appB: App | undefined;
    try {
      const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', PLINTH_DATA_DIR: env.config.dataDir, DATABASE_URL: env.databaseUrl, RATE_LIMIT_SCALE: '100' });
      second = await boot(config, { clock: env.clock, skipMigrations: true });
      appB = await buildApp(second.ctx);
      const g = await guest();
      const start = await startLink(g.accessToken, p, env.app);
      const site = await consent(start.json().data.url, { sub: 'kc-two-node', email: uniqueEmail('twonode'), email_verified: true }, appB);
      const res = await finishWith(site, g.accessToken, p, appB);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.user).toMatchObject({ _id: g.id, isAnonymous: false });
    } finally {
      await appB?.close();
      await second?.close();
    }
  });
});
