/**
 * Passwordless and guest sign-in in a real browser (Debian's Chromium, playwright-core), as an
 * app would use them: a small app page served on its own origin (the project's site URL)
 * calls the API with fetch. Mail goes through the queue to the dev outbox, read as an operator
 * reads it (`GET /api/projects/:id/mail/outbox`).
 * - A magic link read from the dev outbox opens the site URL in the browser, whose page posts
 *   the token from the fragment and ends signed in.
 * - A guest signs in, creates documents, links an email and password, verifies the email with
 *   the code from the outbox, and signing in with that email later finds the same user id and
 *   its documents.
 * - A guest links an OpenID Connect identity (the fake provider on loopback): the browser goes
 *   to the provider and back through the API's callback to the site, whose page finishes the
 *   link with the guest's token; signing in with the provider later lands in the same user.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signOperatorToken } from '../../src/modules/operators/tokens.js';
import { browserGate, startRig, type Rig } from '../e2e/harness.js';
import { makeCollection, type TestProject } from '../helpers/fixtures.js';
import { drainJobs } from '../helpers/jobs.js';
import { authProject } from '../modules/auth/helpers.js';
import { startFakeOidc, type FakeOidc } from '../fakes/oidc.js';

const run = browserGate('guest-and-magic-link.browser.test.ts');

let rig: Rig;
let p: TestProject;
let site: http.Server;
let siteUrl: string;
let operator: { authorization: string };
let idp: FakeOidc;
const contexts: BrowserContext[] = [];

/**
 * The app: on `/auth/callback#type=magiclink&token=…` it drops the token from the address bar
 * and posts it to /passwordless/verify (docs/auth.md); `window.api` is its API client, which
 * keeps the access token in localStorage as apps do.
 */
const appPage = (api: string, pk: string) => `<!doctype html>
<meta charset="utf-8"><title>app</title>
<p id="status">loading</p>
<script type="module">
const API = ${JSON.stringify(api)};
const PK = ${JSON.stringify(pk)};
async function call(method, path, body) {
  const token = localStorage.getItem('token');
  const res = await fetch(API + path, {
    method, credentials: 'include',
    headers: { 'x-api-key': PK, ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: 'Bearer ' + token } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (json.data && json.data.accessToken) localStorage.setItem('token', json.data.accessToken);
  return { status: res.status, body: json };
}
window.api = call;
const status = document.getElementById('status');
const params = new URLSearchParams(location.hash.slice(1));
const query = new URLSearchParams(location.search);
if (location.pathname === '/auth/callback' && query.get('link') && !query.get('error')) {
  const body = {};
  for (const k of ['state', 'code', 'iss', 'user']) if (query.get(k)) body[k] = query.get(k);
  history.replaceState(null, '', location.pathname);
  const r = await call('POST', '/api/userAuth/social/' + encodeURIComponent(query.get('link')) + '/link/finish', body);
  status.textContent = r.status === 200 ? 'linked ' + r.body.data.user._id : 'failed: ' + r.body.code;
} else if (location.pathname === '/auth/callback' && params.get('type') === 'magiclink') {
  history.replaceState(null, '', location.pathname + location.search);
  const r = await call('POST', '/api/userAuth/passwordless/verify', { token: params.get('token') });
  status.textContent = r.status === 200 ? 'signed in as ' + r.body.data.user.email : 'failed: ' + r.body.code;
} else {
  status.textContent = 'ready';
}
</script>`;

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  p = await authProject(rig.env);
  await makeCollection(rig.env.ctx, p.id, 'notes', [{ key: 'text', type: 'String' }], { enabled: true, mode: 'private' });
  site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(appPage(rig.base, p.publishableKey)));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  operator = { authorization: `Bearer ${await signOperatorToken(rig.env.ctx.config.dashboardJwtSecret, p.owner.id, rig.env.clock.now())}` };
  const res = await fetch(`${rig.base}/api/projects/${p.id}`, {
    method: 'PATCH', headers: { ...operator, 'content-type': 'application/json' }, body: JSON.stringify({ siteUrl, allowAnonymous: true }),
  });
  expect(res.status).toBe(200);
  idp = await startFakeOidc();
  const oidc = await fetch(`${rig.base}/api/projects/${p.id}/auth/oidc/acme`, {
    method: 'PUT', headers: { ...operator, 'content-type': 'application/json' },
    body: JSON.stringify({ preset: 'keycloak', label: 'Acme SSO', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, enabled: true }),
  });
  expect(oidc.status, await oidc.text()).toBe(200);
}, 60_000);

afterAll(async () => {
  if (!run) return;
  for (const c of contexts) await c.close();
  await new Promise((r) => site.close(r));
  await idp?.close();
  await rig.close();
});

async function appTab(): Promise<Page> {
  const context = await rig.browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[app] ${e.message}`));
  return page;
}

interface OutboxMessage { to: string[] | string; subject: string; html: string | null; text: string | null }

/** The newest dev-outbox message to `email`, once the queue has delivered it. */
async function outboxMail(email: string): Promise<OutboxMessage> {
  let found: OutboxMessage | undefined;
  await expect.poll(async () => {
    await drainJobs(rig.env);
    const res = await fetch(`${rig.base}/api/projects/${p.id}/mail/outbox`, { headers: operator });
    const messages = ((await res.json()) as { data: { messages: OutboxMessage[] } }).data.messages;
    found = messages.find((m) => JSON.stringify(m.to).includes(email));
    return !!found;
  }, { timeout: 15_000 }).toBe(true);
  return found!;
}

/** What the app's client answers: the status and the JSON envelope. */
interface ApiResult { status: number; body: { code?: string; data: Record<string, unknown> & { user?: Record<string, unknown>; items?: Array<{ text: string }> } } }

const api = (page: Page, method: string, path: string, body?: unknown): Promise<ApiResult> =>
  page.evaluate(([m, pth, b]) => (window as unknown as { api: (m: string, p: string, b?: unknown) => Promise<ApiResult> }).api(m as string, pth as string, b), [method, path, body] as const);

describe.runIf(run)('passwordless and guest sign-in in Chromium', () => {
  it('a magic link read from the dev outbox opens the site URL and ends signed in', { timeout: 60_000 }, async () => {
    const email = `magic${Date.now().toString(36)}@example.com`;
    const page = await appTab();
    await page.goto(siteUrl + '/');
    await expect.poll(() => page.locator('#status').textContent()).toBe('ready');
    const start = await api(page, 'POST', '/api/userAuth/passwordless/start', { email });
    expect(start.status).toBe(200);

    const mail = await outboxMail(email);
    const body = `${mail.text ?? ''} ${mail.html ?? ''}`;
    const link = body.match(/https?:\/\/[^\s"'<>]+#type=magiclink&(?:amp;)?token=[\w-]+/)?.[0]?.replace('&amp;', '&');
    expect(link, body.slice(0, 500)).toBeTruthy();
    expect(new URL(link!).origin + new URL(link!).pathname).toBe(`${siteUrl}/auth/callback`);

    // The person clicks the link: a fresh tab of the browser opens it.
    const tab = await appTab();
    await tab.goto(link!);
    await expect.poll(() => tab.locator('#status').textContent(), { timeout: 15_000 }).toBe(`signed in as ${email}`);
    expect(new URL(tab.url()).origin).toBe(siteUrl);
    expect(tab.url()).not.toContain('token='); // the page took the token out of the address bar
    const me = await api(tab, 'GET', '/api/userAuth/me');
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ email, emailVerified: true });
    // The link is single use: opening it again does not sign in.
    const again = await appTab();
    await again.goto(link!);
    await expect.poll(() => again.locator('#status').textContent(), { timeout: 15_000 }).toBe('failed: passwordless_invalid');
  });

  it('a guest creates documents, links an email, and keeps its user id and documents', { timeout: 60_000 }, async () => {
    const page = await appTab();
    await page.goto(siteUrl + '/');
    await expect.poll(() => page.locator('#status').textContent()).toBe('ready');
    const signedIn = await api(page, 'POST', '/api/userAuth/anonymous');
    expect(signedIn.status).toBe(201);
    const guestId = signedIn.body.data.user!._id as string;
    expect(signedIn.body.data.user).toMatchObject({ email: null, isAnonymous: true });
    for (const text of ['first idea', 'second idea']) expect((await api(page, 'POST', '/api/data/notes', { text })).status).toBe(201);

    const email = `guest${Date.now().toString(36)}@example.com`;
    const linked = await api(page, 'POST', '/api/userAuth/anonymous/link-email', { email, password: 'a long password' });
    expect(linked.status).toBe(200);
    expect(linked.body.data.user).toMatchObject({ _id: guestId, email, isAnonymous: false, emailVerified: false });

    const mail = await outboxMail(email);
    const code = `${mail.text ?? ''} ${mail.html ?? ''}`.match(/\b(\d{6})\b/)?.[1];
    expect(code).toBeTruthy();
    expect((await api(page, 'POST', '/api/userAuth/verify-email', { email, otp: code })).status).toBe(200);

    // Later, in another browser: the email and password sign in to the same user and documents.
    const other = await appTab();
    await other.goto(siteUrl + '/');
    await expect.poll(() => other.locator('#status').textContent()).toBe('ready');
    const login = await api(other, 'POST', '/api/userAuth/login', { email, password: 'a long password' });
    expect(login.status).toBe(200);
    expect(login.body.data.user).toMatchObject({ _id: guestId, email, emailVerified: true, isAnonymous: false });
    const notes = await api(other, 'GET', '/api/data/notes');
    expect(notes.body.data.items!.map((n) => n.text).sort()).toEqual(['first idea', 'second idea']);
    const owners = await rig.env.ctx.db.admin.selectFrom('documents').select('owner_id').where('owner_id', '=', guestId).execute();
    expect(owners).toHaveLength(2);
  });

  it('a guest links an OpenID Connect identity through the provider and back, and later signs in with it to the same user', { timeout: 60_000 }, async () => {
    const page = await appTab();
    await page.goto(siteUrl + '/');
    await expect.poll(() => page.locator('#status').textContent()).toBe('ready');
    const signedIn = await api(page, 'POST', '/api/userAuth/anonymous');
    const guestId = signedIn.body.data.user!._id as string;
    expect((await api(page, 'POST', '/api/data/notes', { text: 'before the link' })).status).toBe(201);
    const start = await api(page, 'POST', '/api/userAuth/social/acme/link');
    expect(start.status).toBe(200);
    const email = `oidc${Date.now().toString(36)}@example.com`;
    idp.nextUser = { sub: 'browser-guest', email, email_verified: true, name: 'Browser Guest' };
    await page.goto(start.body.data.url as string);
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 15_000 }).toBe(`linked ${guestId}`);
    expect(new URL(page.url()).origin + new URL(page.url()).pathname).toBe(`${siteUrl}/auth/callback`);
    const me = await api(page, 'GET', '/api/userAuth/me');
    expect(me.body.data).toMatchObject({ _id: guestId, email, emailVerified: true, isAnonymous: false });

    // Another browser: "Sign in with Acme SSO" lands in the same user, with its documents.
    const other = await appTab();
    await other.goto(`${rig.base}/api/userAuth/social/acme/start?key=${p.publishableKey}`);
    await expect.poll(() => new URL(other.url()).pathname, { timeout: 15_000 }).toBe('/auth/callback');
    const back = new URL(other.url());
    expect(back.searchParams.get('error')).toBeNull();
    expect(back.searchParams.get('userId')).toBe(guestId);
    const token = new URLSearchParams(back.hash.slice(1)).get('token')!;
    await other.evaluate((t) => localStorage.setItem('token', t), token);
    const notes = await api(other, 'GET', '/api/data/notes');
    expect(notes.body.data.items!.map((n) => n.text)).toEqual(['before the link']);
  });
});
