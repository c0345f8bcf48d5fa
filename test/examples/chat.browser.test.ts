/**
 * The chat example (examples/chat) in Debian's Chromium, as two people would use it: both sign
 * up, Alice opens a room with a non-ASCII name, Bob sees it appear and reads her messages live;
 * a message to a room Bob is not in shows as unread until he opens it, and stays read after a
 * reload (his private read marker); Bob sends an image through storage and Alice sees it. A
 * loopback receiver gets every message as a signed webhook, verifies the signature, and sends a
 * notification mail through the mail API, which lands in the dev outbox. A long non-ASCII message
 * sent while Bob's connection is cut (a TCP proxy between his browser and Plinth) reaches him once
 * it is back (the stream resumes from Last-Event-ID), once. The project's nightly schedule, run
 * by its operator from the console's Functions screen, removes a message older than 30 days:
 * it leaves both open chats at once and stays gone after a reload, and the newer ones stay.
 */
import http from 'node:http';
import { sql } from 'kysely';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat } from '../../examples/chat/setup.js';
import { provision, type Provisioned } from '../../examples/lib/provision.js';
import { serveExample, type Served } from '../../examples/lib/serve.js';
import { dispatchBatch } from '../../src/modules/webhooks/dispatcher.js';
import { ROOT_DIR } from '../../src/paths.js';
import { browserGate, openPage, signIn, startRig, type Rig } from '../e2e/harness.js';
import { drainJobs } from '../helpers/jobs.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const run = browserGate('chat.browser.test.ts');
/** A 1×1 PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

let rig: Rig;
let site: Served;
/** Bob's copy of the app reaches Plinth through a proxy the test can cut. */
let bobSite: Served;
let bobLink: TcpProxy;
let project: Provisioned;
let receiver: http.Server;
let jobs: NodeJS.Timeout;
const hooks: Array<{ verified: boolean; text: string; mailStatus: number }> = [];
const contexts: BrowserContext[] = [];

/** The receiver a developer would write: verify the signature, then notify by mail. */
function startReceiver(): Promise<string> {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      let text = '';
      try {
        const event = new Webhook(project.webhookSecrets[0]!).verify(body, req.headers as Record<string, string>) as { data: { document: { text: string } } };
        verified = true;
        text = event.data.document.text;
      } catch {
        verified = false;
      }
      let mailStatus = 0;
      if (verified) {
        const mail = await fetch(`${rig.base}/api/mail/send`, {
          method: 'POST',
          headers: { 'x-api-key': project.secretKey, 'content-type': 'application/json' },
          body: JSON.stringify({ to: 'bob@example.com', subject: 'New message', text }),
        });
        mailStatus = mail.status;
      }
      hooks.push({ verified, text, mailStatus });
      res.writeHead(verified ? 204 : 400).end();
    });
  });
  return new Promise((resolve) => receiver.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`)));
}

beforeAll(async () => {
  if (!run) return;
  rig = await startRig({ REALTIME_POLL_MS: '50' });
  const config: Record<string, unknown> = {};
  site = await serveExample(path.join(ROOT_DIR, 'examples', 'chat'), config);
  project = await provision(rig.base, chat, { siteUrl: site.url, webhookUrl: await startReceiver() });
  Object.assign(config, { baseUrl: rig.base, publishableKey: project.publishableKey });
  bobLink = await startTcpProxy('127.0.0.1', Number(new URL(rig.base).port));
  bobSite = await serveExample(path.join(ROOT_DIR, 'examples', 'chat'), { baseUrl: bobLink.via(rig.base).replace(/\/$/, ''), publishableKey: project.publishableKey });
  // What `npm start` runs beside the API: the webhook dispatcher and the job worker.
  jobs = setInterval(() => void dispatchBatch(rig.env.ctx).then(() => drainJobs(rig.env)).catch(() => {}), 200);
}, 60_000);

afterAll(async () => {
  if (!run) return;
  clearInterval(jobs);
  for (const c of contexts) await c.close();
  await site.close();
  await bobSite.close();
  await bobLink.close();
  await new Promise((r) => receiver.close(r));
  await rig.close();
});

async function person(name: string, app: Served): Promise<Page> {
  const context = await rig.browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.log(`[${name}] ${m.text()}`); });
  page.on('pageerror', (e) => console.log(`[${name}] ${e.message}`));
  await page.goto(app.url);
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Email', { exact: true }).fill(`${name.toLowerCase()}@example.com`);
  await page.getByLabel('Password', { exact: true }).fill('a long password');
  await page.getByRole('button', { name: 'Sign up' }).click();
  // sign-up hashes a password (argon2) and the app reads its rooms before it goes live: on a
  // loaded CI machine that alone has taken more than 10 s
  await expect.poll(async () => `${await page.locator('#live').textContent()}${await page.locator('#auth-error').textContent()}`, { timeout: 20_000 }).toBe('live');
  return page;
}

const room = (page: Page, name: string) => page.locator('#rooms li', { hasText: name });
const messages = (page: Page) => page.locator('#messages li .text').allTextContents();

describe.runIf(run)('the chat example, two people in two browsers', () => {
  let alice: Page;
  let bob: Page;
  const CAFE = 'Café ☕ Ελληνικά';

  it('both sign up; a room Alice opens appears for Bob through realtime', { timeout: 60_000 }, async () => {
    [alice, bob] = await Promise.all([person('Alice', site), person('Bob', bobSite)]);
    await alice.getByLabel('New room').fill(CAFE);
    await alice.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => room(bob, CAFE).count(), { timeout: 5_000 }).toBe(1);
  });

  it("Bob reads Alice's message live, within a second or two", async () => {
    await room(bob, CAFE).getByRole('button').click();
    await alice.getByLabel('Message', { exact: true }).fill('Bonjour Bob, ça va ? 🎉');
    await alice.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => messages(bob), { timeout: 3_000 }).toEqual(['Bonjour Bob, ça va ? 🎉']);
  });

  it('a message to a room Bob is not in is unread until he opens it, and stays read after a reload', async () => {
    await bob.getByLabel('New room').fill('Random');
    await bob.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => bob.locator('#room-title').textContent()).toBe('Random');
    await alice.getByLabel('Message', { exact: true }).fill('Tu es là ?');
    await alice.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => room(bob, CAFE).locator('.badge').textContent(), { timeout: 3_000 }).toBe('1');
    await room(bob, CAFE).getByRole('button').click();
    await expect.poll(() => messages(bob)).toEqual(['Bonjour Bob, ça va ? 🎉', 'Tu es là ?']);
    await expect.poll(() => room(bob, CAFE).locator('.badge').textContent()).toBe('');
    // The badge clears at once; the read marker is saved right after. Reloading before it is
    // saved would rightly show the message unread again: wait for it, as the app did.
    const cafeId = await room(bob, CAFE).getAttribute('data-room');
    const latest = async () => {
      const token = await bob.evaluate(() => JSON.parse(localStorage.getItem('plinth.session') ?? '{}').accessToken); // @plinth/client's session
      const headers = { 'x-api-key': project.publishableKey, authorization: `Bearer ${token}` };
      const [reads, msgs] = await Promise.all([
        fetch(`${rig.base}/api/data/reads?room=${cafeId}`, { headers }).then((r) => r.json()),
        fetch(`${rig.base}/api/data/messages?room=${cafeId}&sort=-createdAt&limit=1`, { headers }).then((r) => r.json()),
      ]) as Array<{ data: { items: Array<{ lastReadAt?: string; createdAt?: string }> } }>;
      return reads!.data.items.some((m) => m.lastReadAt === msgs!.data.items[0]?.createdAt);
    };
    await expect.poll(latest, { timeout: 5_000 }).toBe(true);
    await bob.reload();
    await bob.getByLabel('Email', { exact: true }).fill('bob@example.com');
    await bob.getByLabel('Password', { exact: true }).fill('a long password');
    await bob.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => room(bob, CAFE).count(), { timeout: 5_000 }).toBe(1);
    expect(await room(bob, CAFE).locator('.badge').textContent()).toBe('');
  });

  it('Bob sends an image through storage; Alice sees it load', async () => {
    await room(bob, CAFE).getByRole('button').click();
    await bob.getByLabel('Message', { exact: true }).fill('regarde');
    await bob.getByLabel('Image', { exact: true }).setInputFiles({ name: 'pixel.png', mimeType: 'image/png', buffer: PIXEL });
    await bob.getByRole('button', { name: 'Send' }).click();
    const img = alice.locator('#messages li', { hasText: 'regarde' }).locator('img');
    await expect.poll(() => img.count(), { timeout: 3_000 }).toBe(1);
    await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth), { timeout: 3_000 }).toBe(1);
  });

  it("a long non-ASCII message sent while Bob's connection is cut reaches him once it is back, once", async () => {
    const long = 'Ελληνικά, 東京, ünïcødé 🚀 '.repeat(400).trim(); // ~10 000 characters
    await bobLink.cut();
    await expect.poll(() => bob.locator('#live').textContent(), { timeout: 10_000 }).toBe('offline');
    await alice.getByLabel('Message', { exact: true }).fill(long);
    await alice.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => messages(alice), { timeout: 3_000 }).toContain(long);
    await bobLink.restore();
    await expect.poll(() => messages(bob), { timeout: 15_000 }).toContain(long);
    expect((await messages(bob)).filter((m) => m === long)).toHaveLength(1);
  });

  it('every message reached the webhook receiver signed, and its notification mail the dev outbox', async () => {
    await expect.poll(() => hooks.length, { timeout: 10_000 }).toBe(4);
    expect(hooks.map((h) => h.verified)).toEqual([true, true, true, true]);
    expect(hooks.map((h) => h.text.slice(0, 12)).sort()).toEqual(['Bonjour Bob,', 'Tu es là ?', 'regarde', 'Ελληνικά, 東京'].sort());
    expect(hooks.map((h) => h.mailStatus)).toEqual([200, 200, 200, 200]);
    const outbox = async () => {
      const res = await fetch(`${rig.base}/api/projects/${project.projectId}/mail/outbox`, { headers: { authorization: `Bearer ${project.operatorToken}` } });
      const body = (await res.json()) as { data: unknown };
      return JSON.stringify(body.data);
    };
    await expect.poll(outbox, { timeout: 10_000 }).toContain('Tu es l');
  });

  it("the nightly clean-up, run from the console, removes a message older than 30 days from both chats; the rest stay", { timeout: 60_000 }, async () => {
    const OLD = 'Un message de l’an dernier 🕰️ — ünïcødé';
    await alice.getByLabel('Message', { exact: true }).fill(OLD);
    await alice.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => messages(bob), { timeout: 5_000 }).toContain(OLD);
    const before = await messages(bob);
    // Forty days pass for that one message (the only step no user can take).
    const moved = await sql`UPDATE documents SET created_at = now() - interval '40 days'
      WHERE project_id = ${project.projectId} AND data->>'text' = ${OLD}`.execute(rig.env.ctx.db.admin);
    expect(Number(moved.numAffectedRows)).toBe(1);

    // The operator runs the schedule's tick from the console (what the worker does at 03:17 UTC).
    const { page: console_ } = await openPage(rig);
    await signIn(console_, project.operatorEmail, project.operatorPassword);
    await console_.goto(`/_/#/p/${project.projectId}/functions/clear-old-messages`);
    await console_.getByRole('heading', { name: 'Function clear-old-messages' }).waitFor();
    const runPanel = console_.getByRole('region', { name: 'Run with this body' });
    await runPanel.getByLabel('Event (JSON)', { exact: true }).fill(JSON.stringify({ id: 'sch_from_console', scheduledAt: new Date().toISOString() }));
    await runPanel.getByRole('button', { name: 'Run', exact: true }).click();
    const result = runPanel.getByRole('status', { name: 'Run result' });
    await result.waitFor({ timeout: 15_000 });
    expect(JSON.parse((await result.getByLabel('Returned value').textContent())!)).toEqual({ removed: 1 });
    expect(await result.textContent()).toContain('removed 1 messages older than');
    await console_.context().close();

    // Both open chats lose it at once (realtime's delete event); every newer message stays.
    const rest = before.filter((m) => m !== OLD);
    await expect.poll(() => messages(bob), { timeout: 5_000 }).toEqual(rest);
    await expect.poll(() => messages(alice), { timeout: 5_000 }).not.toContain(OLD);
    // and it is gone for good: a fresh load of the room does not bring it back
    await bob.reload();
    await bob.getByLabel('Email', { exact: true }).fill('bob@example.com');
    await bob.getByLabel('Password', { exact: true }).fill('a long password');
    await bob.getByRole('button', { name: 'Sign in' }).click();
    await room(bob, CAFE).getByRole('button').click();
    await expect.poll(() => messages(bob), { timeout: 10_000 }).toEqual(rest);
  });
});
