/**
 * End users' passkeys in a real browser: Debian's Chromium (playwright-core) with the DevTools
 * WebAuthn virtual authenticator (internal, resident keys, user verification) registers a
 * passkey from the API's options and signs in with it, discoverably (no email typed). The page
 * is a blank page on http://localhost:<port> (a secure context; `localhost` is the relying
 * party id); the API calls go through the app from the test, the ceremonies run in the page.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { decodeJwt } from 'jose';
import { browserGate, launchChromium } from '../e2e/harness.js';
import type { TestEnv } from '../helpers/context.js';
import type { TestProject } from '../helpers/fixtures.js';
import { authTestEnv, signup } from '../modules/auth/helpers.js';

const run = browserGate('passkeys.browser.test.ts');

let env: TestEnv;
let p: TestProject;
let server: http.Server;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  if (!run) return;
  ({ env, p } = await authTestEnv());
  server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title><p>app'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}`, headers: p.owner.auth, payload: { passkeys: { rpId: 'localhost', origins: [origin] } } });
  expect(res.statusCode).toBe(200);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  if (!run) return;
  await browser?.close();
  await new Promise((r) => server.close(r));
  await env.close();
});

async function pageWithAuthenticator(): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(origin + '/');
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return page;
}

const create = (page: Page, options: unknown) =>
  page.evaluate(async (json) => {
    const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(json as PublicKeyCredentialCreationOptionsJSON);
    const cred = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential;
    return cred.toJSON();
  }, options);

const get = (page: Page, options: unknown) =>
  page.evaluate(async (json) => {
    const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(json as PublicKeyCredentialRequestOptionsJSON);
    const cred = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential;
    return cred.toJSON();
  }, options);

describe('passkeys in Chromium with a virtual authenticator', () => {
  it('an end user registers a passkey and signs in with it without typing an email', async () => {
    if (!run) return;
    const page = await pageWithAuthenticator();
    const { body } = await signup(env, p);
    const token = body.data.accessToken;
    const headers = { ...p.pk, authorization: `Bearer ${token}` };
    const options = (await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/register/options', headers })).json().data;
    const registration = await create(page, options);
    const reg = await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/register', headers, payload: { name: 'Chromium', response: registration } });
    expect(reg.statusCode).toBe(200);
    expect(reg.json().data.recoveryCodes).toHaveLength(10);

    const signinOptions = (await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/signin/options', headers: p.pk })).json().data;
    expect(signinOptions.allowCredentials ?? []).toHaveLength(0);
    const assertion = await get(page, signinOptions);
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/signin', headers: p.pk, payload: { response: assertion } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user._id).toBe(body.data.user._id);
    expect(decodeJwt(res.json().data.accessToken)).toMatchObject({ aal: 'aal2', amr: [{ method: 'passkey' }] });
    // The same assertion again: its challenge is spent.
    const replay = await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/signin', headers: p.pk, payload: { response: assertion } });
    expect(replay.json().code).toBe('passkey_challenge_invalid');
    await page.context().close();
  }, 60_000);
});
