/**
 * Realtime in a real browser (Debian's Chromium driven by playwright-core): a page on the app's
 * own origin (another port) asks for a ticket with the publishable key and opens the stream with
 * the browser's own `EventSource`; it receives the changes, and when the connection drops the
 * browser reconnects by itself with `Last-Event-ID` and gets the changes made meanwhile, once
 * each and in order. Skipped, saying so, where /usr/bin/chromium is not installed.
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeProject, type TestProject } from '../helpers/fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const SKIP = hasChromium ? '' : ` (SKIPPED: ${CHROMIUM} is not installed; apt-get install -y chromium)`;
if (!hasChromium) console.warn(`realtime.browser.test.ts skipped: ${CHROMIUM} is not installed (apt-get install -y chromium)`);

let env: TestEnv;
let p: TestProject;
let api: string;
let site: http.Server;
let siteOrigin: string;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium) return;
  env = await createTestEnv({ REALTIME_POLL_MS: '20' });
  p = await makeProject(env.ctx);
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name: 'messages', schema: [{ key: 'text', type: 'String' }], realtime: true } });
  expect(res.statusCode).toBe(201);
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  api = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
  site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const { launchChromium } = await import('../e2e/harness.js');
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  if (!hasChromium) return;
  await browser?.close();
  await new Promise((r) => site.close(r));
  await env.close();
});

const write = async (text: string) => {
  const r = await env.app.inject({ method: 'POST', url: '/api/data/messages', headers: p.sk, payload: { text } });
  expect(r.statusCode).toBe(201);
};

const received = (page: Page) => page.evaluate(() => (window as unknown as { got: string[] }).got);

describe('EventSource in Chromium', () => {
  it(`receives changes, and after a dropped connection resumes with Last-Event-ID, losing and repeating nothing${SKIP}`, async () => {
    if (!hasChromium) return;
    const page = await (await browser.newContext()).newPage();
    await page.goto(siteOrigin + '/');
    await page.evaluate(async ({ base, key }) => {
      const w = window as unknown as { got: string[]; opens: number; ready: boolean };
      w.got = [];
      w.opens = 0;
      const res = await fetch(`${base}/api/realtime/ticket`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [{ collection: 'messages' }] }),
      });
      const { data } = await res.json();
      const source = new EventSource(`${base}/api/realtime?ticket=${encodeURIComponent(data.ticket)}`);
      source.onopen = () => w.opens++;
      source.addEventListener('ready', () => (w.ready = true));
      source.addEventListener('create', (e) => w.got.push(JSON.parse((e as MessageEvent).data).document.text));
    }, { base: api, key: p.publishableKey });
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    await write('one');
    await write('two');
    await page.waitForFunction(() => (window as unknown as { got: string[] }).got.length >= 2);

    // the network drops every open connection; the browser reconnects on its own (retry: 2 s)
    env.app.server.closeAllConnections();
    await write('three');
    await write('four');
    await page.waitForFunction(() => (window as unknown as { got: string[] }).got.length >= 4, undefined, { timeout: 15_000 });
    await write('five');
    await page.waitForFunction(() => (window as unknown as { got: string[] }).got.length >= 5, undefined, { timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 300));
    expect(await received(page)).toEqual(['one', 'two', 'three', 'four', 'five']);
    expect(await page.evaluate(() => (window as unknown as { opens: number }).opens)).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it(`hears 'leave' with the id when an update takes a document out of its filter${SKIP}`, async () => {
    if (!hasChromium) return;
    const page = await (await browser.newContext()).newPage();
    await page.goto(siteOrigin + '/');
    await page.evaluate(async ({ base, key }) => {
      const w = window as unknown as { seen: string[]; ready: boolean };
      w.seen = [];
      const res = await fetch(`${base}/api/realtime/ticket`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions: [{ collection: 'messages', filter: { text: 'pinned' } }] }),
      });
      const { data } = await res.json();
      const source = new EventSource(`${base}/api/realtime?ticket=${encodeURIComponent(data.ticket)}`);
      source.addEventListener('ready', () => (w.ready = true));
      for (const name of ['create', 'update', 'leave']) {
        source.addEventListener(name, (e) => w.seen.push(`${name}:${JSON.parse((e as MessageEvent).data).id}`));
      }
    }, { base: api, key: p.publishableKey });
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    const created = await env.app.inject({ method: 'POST', url: '/api/data/messages', headers: p.sk, payload: { text: 'pinned' } });
    const id = created.json()._id as string;
    const moved = await env.app.inject({ method: 'PATCH', url: `/api/data/messages/${id}`, headers: p.sk, payload: { text: 'unpinned' } });
    expect(moved.statusCode).toBe(200);
    await page.waitForFunction(() => (window as unknown as { seen: string[] }).seen.length >= 2, undefined, { timeout: 10_000 });
    expect(await page.evaluate(() => (window as unknown as { seen: string[] }).seen)).toEqual([`create:${id}`, `leave:${id}`]);
  }, 60_000);
});
