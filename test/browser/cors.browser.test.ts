/**
 * The CORS threats of cors.encoded-path.test.ts, in a real browser (Debian's Chromium driven by
 * playwright-core): a page on a foreign origin, with the operator's session cookie in the
 * browser, must not be able to read `/api/%70rojects`; and the published SDK with its
 * `headers` option (a custom request header) must work from a foreign origin on the public API.
 * Skipped, saying so, where /usr/bin/chromium is not installed (`apt-get install -y chromium`).
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeProject, type TestProject } from '../helpers/fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const SKIP = hasChromium ? '' : ` (SKIPPED: ${CHROMIUM} is not installed; apt-get install -y chromium)`;
if (!hasChromium) console.warn(`cors.browser.test.ts skipped: ${CHROMIUM} is not installed (apt-get install -y chromium)`);

const sdkSource = readFileSync(createRequire(import.meta.url).resolve('@urbackend/sdk').replace(/index\.c?js$/, 'dist/index.mjs'), 'utf8');

let env: TestEnv;
let p: TestProject;
let api: string;
let page: http.Server;
let pageOrigin: string;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium) return;
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  await makeCollection(env.ctx, p.id, 'notes');
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  api = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
  // The hostile site: another origin (another port) on the same host, so the browser sends
  // the operator's cookie with credentialed requests (same-site).
  page = http.createServer((req, res) => {
    if (req.url === '/sdk.mjs') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(sdkSource);
    const html = '<!doctype html><title>elsewhere</title><script type="module">import urBackend from "/sdk.mjs"; window.urBackend = urBackend;</script>';
    res.writeHead(200, { 'content-type': 'text/html' }).end(html);
  });
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  const { launchChromium } = await import('../e2e/harness.js');
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  if (!hasChromium) return;
  await browser?.close();
  await new Promise((r) => page.close(r));
  await env.close();
});

async function openForeignPage() {
  const context = await browser.newContext();
  await context.addCookies([{ name: 'accessToken', value: p.owner.token, domain: '127.0.0.1', path: '/', sameSite: 'Lax' }]);
  const tab = await context.newPage();
  await tab.goto(pageOrigin + '/');
  await tab.waitForFunction(() => 'urBackend' in window);
  return { tab, context };
}

describe('in Chromium, from a foreign origin', () => {
  it(`cannot read the operator's projects through an encoded dashboard path${SKIP}`, async () => {
    if (!hasChromium) return;
    const { tab, context } = await openForeignPage();
    const outcome = await tab.evaluate(async (base) => {
      try {
        const res = await fetch(`${base}/api/%70rojects`, { credentials: 'include' });
        return `read ${res.status}: ${await res.text()}`;
      } catch (err) {
        return `blocked: ${String(err)}`;
      }
    }, api);
    await context.close();
    expect(outcome).toMatch(/^blocked: TypeError/);
  });

  it(`the published SDK works with a custom header (headers option)${SKIP}`, async () => {
    if (!hasChromium) return;
    const { tab, context } = await openForeignPage();
    const outcome = await tab.evaluate(
      async ({ base, key }) => {
        const urBackend = (window as unknown as { urBackend: (c: object) => { db: { getAll(c: string): Promise<unknown> } } }).urBackend;
        const client = urBackend({ apiKey: key, baseUrl: base, headers: { 'x-app-version': '1.2.3' } });
        try {
          return `ok ${JSON.stringify(await client.db.getAll('notes'))}`;
        } catch (err) {
          return `failed: ${String(err)}`;
        }
      },
      { base: api, key: p.publishableKey },
    );
    await context.close();
    expect(outcome).toBe('ok []');
  });
});
