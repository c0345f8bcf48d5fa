/**
 * @plinth/client in Chromium (playwright-core), loaded by an app page on its own origin as an
 * app bundles it (esbuild, one ES module):
 * - two tabs of one app share the session (localStorage): when their tokens expire and both
 *   call at once, exactly one refresh is sent (Web Locks) and the other tab adopts it, so the
 *   rotated refresh token is never reused; a sign-out in one tab signs the other out
 *   (BroadcastChannel); a realtime change reaches the page over the streamed fetch;
 * - cookie mode: the refresh token never reaches page storage, and a reload restores the
 *   session from the HttpOnly cookie;
 * - passkeys through the browser's WebAuthn (DevTools virtual authenticator, the app on
 *   http://localhost): register one signed in, then sign in with it, no email typed.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the page-side callbacks reach the app's window globals */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserGate, startRig, type Rig } from '../e2e/harness.js';
import type { TestProject } from '../helpers/fixtures.js';
import { authProject, PASSWORD, uniqueEmail } from '../modules/auth/helpers.js';
import { ROOT_DIR } from '../../src/paths.js';

const run = browserGate('client.browser.test.ts');
let rig: Rig;
let p: TestProject;
let site: http.Server;
let siteUrl: string;

const page = (api: string, pk: string) => `<!doctype html><meta charset="utf-8"><title>app</title>
<script type="module">
import * as P from '/client.js';
const mode = new URLSearchParams(location.search).get('mode') ?? 'header';
window.P = P;
window.events = [];
window.plinth = P.createClient({ url: ${JSON.stringify(api)}, apiKey: ${JSON.stringify(pk)}, auth: { mode } });
window.plinth.auth.onAuthStateChange((e) => window.events.push(e));
window.ready = window.plinth.auth.getSession();
</script>`;

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  p = await authProject(rig.env);
  const res = await rig.env.app.inject({
    method: 'POST',
    url: `/api/projects/${p.id}/collections`,
    headers: p.owner.auth,
    payload: { name: 'notes', schema: [{ key: 'text', type: 'String' }, { key: 'userId', type: 'String' }], realtime: true, rls: { enabled: true, mode: 'public-read', ownerField: 'userId', requireAuthForWrite: true } },
  });
  expect(res.statusCode).toBe(201);
  const bundle = await build({
    stdin: { contents: "export * from './index.ts'; export { realtime } from './realtime.ts'; export { mfa } from './mfa.ts';", resolveDir: path.join(ROOT_DIR, 'packages/client/src'), loader: 'ts' },
    bundle: true,
    format: 'esm',
    write: false,
  });
  const js = bundle.outputFiles[0]!.text;
  site = http.createServer((req, res) => {
    if (req.url === '/client.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(page(rig.base, p.publishableKey));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const passkeys = { rpId: 'localhost', origins: [siteUrl.replace('127.0.0.1', 'localhost')] };
  const patched = await rig.env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}`, headers: p.owner.auth, payload: { passkeys } });
  expect(patched.statusCode).toBe(200);
});
afterAll(async () => {
  if (!run) return;
  site.close();
  await rig.close();
});

async function open(pages: Page[], url: string): Promise<void> {
  for (const pg of pages) {
    await pg.goto(url);
    await pg.waitForFunction(() => 'ready' in window);
    await pg.evaluate(() => (window as unknown as { ready: Promise<unknown> }).ready);
  }
}

describe.runIf(run)('@plinth/client in Chromium', () => {
  it('two tabs: one refresh for both after expiry, sign-out reaches the other tab, realtime arrives', async () => {
    const context = await rig.browser.newContext();
    const refreshes: string[] = [];
    context.on('request', (r) => {
      if (r.url().endsWith('/api/userAuth/refresh-token')) refreshes.push(r.url());
    });
    const [a, b] = [await context.newPage(), await context.newPage()];
    await open([a!], siteUrl);
    const email = uniqueEmail('tabs');
    await a!.evaluate(({ email, password }) => (window as any).plinth.auth.signUp({ email, password }), { email, password: PASSWORD });
    await open([b!], siteUrl);
    expect(await b!.evaluate(() => (window as any).plinth.auth.user?.email)).toBe(email);

    rig.env.clock.advance(16 * 60 * 1000); // every access token the server issued has expired
    const me = (pg: Page) => pg.evaluate(() => (window as any).plinth.auth.me().then((u: { email: string }) => u.email));
    expect(await Promise.all([me(a!), me(b!), me(a!), me(b!)])).toEqual([email, email, email, email]);
    expect(refreshes).toHaveLength(1);
    // both tabs hold the rotated session: a further refresh from either works (no refresh_reused)
    expect(await b!.evaluate(() => (window as any).plinth.auth.refresh())).toBe(true);
    expect(await a!.evaluate(() => (window as any).plinth.auth.refresh())).toBe(true);

    await b!.evaluate(() => {
      const w = window as any;
      w.changes = [];
      w.channel = w.P.realtime(w.plinth).subscribe([{ collection: 'notes' }], { onChange: (e: unknown) => w.changes.push(e) });
    });
    await b!.waitForFunction(() => (window as any).channel.state === 'open');
    await a!.evaluate(() => (window as any).plinth.collection('notes').insert({ text: 'from tab a' }));
    await b!.waitForFunction(() => (window as any).changes.some((c: any) => c.document?.text === 'from tab a'));

    await a!.evaluate(() => (window as any).plinth.auth.signOut());
    await b!.waitForFunction(() => (window as any).events.includes('SIGNED_OUT'));
    expect(await b!.evaluate(() => (window as any).plinth.auth.user)).toBeNull();
    await context.close();
  });

  it('cookie mode: no refresh token in page storage; a reload restores the session from the cookie', async () => {
    const context = await rig.browser.newContext();
    const pg = await context.newPage();
    await open([pg], `${siteUrl}/?mode=cookie`);
    const email = uniqueEmail('cookie');
    await pg.evaluate(({ email, password }) => (window as any).plinth.auth.signUp({ email, password }), { email, password: PASSWORD });
    const stored = await pg.evaluate(() => JSON.stringify(localStorage));
    expect(stored).not.toContain('refreshToken');
    const cookies = await context.cookies(); // Path=/api/userAuth
    expect(cookies.find((c) => c.name === 'refreshToken')?.httpOnly).toBe(true);
    await pg.evaluate(() => localStorage.clear()); // nothing but the cookie is left
    await open([pg], `${siteUrl}/?mode=cookie`);
    expect(await pg.evaluate(() => (window as any).plinth.auth.me().then((u: { email: string }) => u.email))).toBe(email);
    await context.close();
  });

  it('passkeys: register one while signed in, sign out, sign in with it (no email typed)', async () => {
    const context = await rig.browser.newContext();
    const pg = await context.newPage();
    await open([pg], siteUrl.replace('127.0.0.1', 'localhost'));
    const cdp = await context.newCDPSession(pg);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    const email = uniqueEmail('passkey');
    const result = await pg.evaluate(
      async ({ email, password }) => {
        const w = window as any;
        await w.plinth.auth.signUp({ email, password });
        const m = w.P.mfa(w.plinth);
        const { recoveryCodes } = await m.registerPasskey('Chromium');
        const factors = await m.factors();
        await w.plinth.auth.signOut();
        const signed = await m.signInWithPasskey();
        return { codes: recoveryCodes.length, passkeys: factors.passkeys.map((k: { name: string }) => k.name), email: signed.user.email, user: w.plinth.auth.user.email };
      },
      { email, password: PASSWORD },
    );
    expect(result).toEqual({ codes: 10, passkeys: ['Chromium'], email, user: email });
    await context.close();
  });
});
