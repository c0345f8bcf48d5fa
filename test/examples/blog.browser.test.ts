/**
 * The blog example (examples/blog) in Debian's Chromium, as two people would use it: both sign
 * up; Alice writes a 50 000-character Markdown post with emoji, accented and non-Latin text and a
 * cover image, and it is stored whole and rendered; Bob finds it by a word of its body; Alice's
 * draft is in her list and invisible to Bob (list, search and by id: the collection's access
 * rules); Bob comments, Alice sees the count (aggregate) and no way to edit his comment, and
 * Plinth refuses her edit; the list pages through older posts with a cursor. Both subscribe to
 * new posts: the project's after-hook mails Bob (not Alice, the author) once her post is
 * published, through plinth.mail into the dev outbox; her draft mails nobody.
 */
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blog } from '../../examples/blog/setup.js';
import { provision, type Provisioned } from '../../examples/lib/provision.js';
import { serveExample, type Served } from '../../examples/lib/serve.js';
import { dispatchBatch } from '../../src/modules/webhooks/dispatcher.js';
import { ROOT_DIR } from '../../src/paths.js';
import { browserGate, startRig, type Rig } from '../e2e/harness.js';
import { drainJobs } from '../helpers/jobs.js';

const run = browserGate('blog.browser.test.ts');
/** A 1×1 PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** A Markdown body of exactly `n` characters (code points): headings, lists, emphasis, emoji. */
function longPost(n: number): string {
  const head = '# Voyage à Zürich 🚂\n\nUn récit où l’on croise le mot **quetzalcóatl**, une seule fois.\n\n';
  const chunk = '## Étape\n\nÇa commence à l’aube : café, crème brûlée, *smørrebrød* et 東京の夜 🌃🎉. Ελληνικά, naïveté, façade.\n\n- première\n- deuxième 👩‍💻\n\n';
  let text = head;
  while ([...text].length < n) text += chunk;
  return [...text].slice(0, n - 5).join('') + '\n\nFin';
}

let rig: Rig;
let site: Served;
let project: Provisioned;
let jobs: NodeJS.Timeout;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  const config: Record<string, unknown> = {};
  site = await serveExample(path.join(ROOT_DIR, 'examples', 'blog'), config);
  project = await provision(rig.base, blog, { siteUrl: site.url });
  Object.assign(config, { baseUrl: rig.base, publishableKey: project.publishableKey });
  // What `npm start` runs beside the API: the change stream's dispatcher and the job worker
  // (after-hooks, mail).
  jobs = setInterval(() => void dispatchBatch(rig.env.ctx).then(() => drainJobs(rig.env)).catch(() => {}), 200);
}, 60_000);

afterAll(async () => {
  if (!run) return;
  clearInterval(jobs);
  for (const c of contexts) await c.close();
  await site.close();
  await rig.close();
});

async function person(name: string): Promise<Page> {
  const context = await rig.browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[${name}] ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') console.log(`[${name}] ${m.text()}`); });
  await page.goto(site.url);
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Email', { exact: true }).fill(`${name.toLowerCase()}@example.com`);
  await page.getByLabel('Password', { exact: true }).fill('a long password');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await soon(async () => `${await page.locator('#me').textContent()}${await page.locator('#auth-error').textContent()}`).toBe(name);
  return page;
}

/** What the page shows once it has settled (each step waits on requests and rendering). */
const soon = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 15_000 });
const titles = (page: Page) => page.locator('#posts li .open').allTextContents();
const tokenOf = (page: Page) => page.evaluate(() => JSON.parse(localStorage.getItem('plinth.session') ?? '{}').accessToken as string | null); // @plinth/client's session
/** The project's dev outbox, as its operator reads it (GET …/mail/outbox). */
async function outbox(): Promise<Array<{ to: string[]; subject: string; text: string | null; lastEvent: string }>> {
  const res = await fetch(`${rig.base}/api/projects/${project.projectId}/mail/outbox`, { headers: { authorization: `Bearer ${project.operatorToken}` } });
  return ((await res.json()) as { data: { messages: Array<{ to: string[]; subject: string; text: string | null; lastEvent: string }> } }).data.messages;
}
async function subscribe(page: Page, email: string) {
  await page.getByRole('button', { name: 'Subscribe', exact: true }).click();
  await soon(async () => `${await page.locator('#subscription').textContent()}${await page.locator('#blog-error').textContent()}`).toBe(`New posts are mailed to ${email}`);
  expect(await page.getByRole('button', { name: 'Unsubscribe' }).isVisible()).toBe(true);
}
const api = (p: string, token: string | null, init: RequestInit = {}) =>
  fetch(rig.base + p, { ...init, headers: { 'x-api-key': project.publishableKey, 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } });

async function write(page: Page, post: { title: string; body: string; publish: boolean; cover?: boolean }) {
  await page.getByRole('button', { name: 'New post' }).click();
  await page.getByLabel('Title').fill(post.title);
  const body = page.getByLabel('Body (Markdown)');
  if (post.body.length < 1000) await body.fill(post.body);
  // a long text arrives as a paste does: one input event (typing 50 000 characters through
  // fill() takes Chromium minutes)
  else await body.evaluate((el: HTMLTextAreaElement, text: string) => { el.value = text; el.dispatchEvent(new Event('input', { bubbles: true })); }, post.body);
  if (post.cover) await page.getByLabel('Cover image').setInputFiles({ name: 'cover.png', mimeType: 'image/png', buffer: PIXEL });
  await page.getByRole('checkbox', { name: /Publish/ }).setChecked(post.publish);
  await page.getByRole('button', { name: 'Save post' }).click();
  await soon(async () => `${await page.locator('#post-title').textContent()}${await page.locator('#blog-error').textContent()}`).toBe(post.title);
}

describe.runIf(run)('the blog example, two people in two browsers', { timeout: 60_000 }, () => {
  let alice: Page;
  let bob: Page;
  const LONG = longPost(50_000);
  const TITLE = 'Voyage à Zürich 🚂 — un très long récit';
  const DRAFT = 'Brouillon : idées pour l’été ☀️';

  it('both sign up and subscribe; Alice publishes a 50 000-character post with a cover, stored whole and rendered', { timeout: 90_000 }, async () => {
    expect([...LONG]).toHaveLength(50_000);
    [alice, bob] = await Promise.all([person('Alice'), person('Bob')]);
    await subscribe(bob, 'bob@example.com');
    await subscribe(alice, 'alice@example.com');
    await write(alice, { title: TITLE, body: LONG, publish: true, cover: true });
    await soon(() => alice.locator('#post-body h3').first().textContent()).toBe('Voyage à Zürich 🚂');
    expect(await alice.locator('#post-body strong').first().textContent()).toBe('quetzalcóatl');
    expect(await alice.locator('#post-body').textContent()).toContain('東京の夜 🌃🎉');
    expect(await alice.locator('#post-body li').count()).toBeGreaterThan(100);
    const cover = alice.locator('#post-cover');
    await soon(() => cover.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(1);
    const stored = await api(`/api/data/posts?search=quetzalcóatl`, null).then((r) => r.json()) as { data: { items: Array<{ body: string }> } };
    expect(stored.data.items).toHaveLength(1);
    expect(stored.data.items[0]!.body).toBe(LONG);
    // The slug is the server's, made by the project's before-hook from the title.
    expect((stored.data.items[0] as { slug?: string }).slug).toBe('voyage-a-zurich-un-tres-long-recit');
    expect(await alice.locator('#post-slug').textContent()).toBe('/voyage-a-zurich-un-tres-long-recit');
  });

  it('Bob finds the post by a word of its body and reads it whole', async () => {
    await bob.getByLabel('Search posts').fill('quetzalcóatl');
    await bob.getByRole('button', { name: 'Search', exact: true }).click();
    await soon(() => titles(bob)).toEqual([TITLE]);
    await bob.locator('#posts li .open', { hasText: TITLE }).click();
    await soon(() => bob.locator('#post-title').textContent()).toBe(TITLE);
    const text = await bob.locator('#post-body').textContent();
    expect(text).toContain('smørrebrød');
    expect(text).toContain('Fin');
  });

  it("Alice's draft is in her list, and nowhere for Bob: not listed, not found, not by id", async () => {
    await write(alice, { title: DRAFT, body: 'Rien de publié : *quetzalcóatl* et crème brûlée.', publish: false });
    expect(await alice.locator('#post-draft').isVisible()).toBe(true);
    await alice.getByRole('button', { name: '← All posts' }).click();
    await soon(() => titles(alice)).toEqual([DRAFT, TITLE]);
    expect(await alice.locator('#posts li', { hasText: DRAFT }).locator('.pill').textContent()).toBe('draft');

    await bob.getByRole('button', { name: 'All posts', exact: true }).click();
    await soon(() => titles(bob)).toEqual([TITLE]);
    await bob.getByLabel('Search posts').fill('quetzalcóatl');
    await bob.getByRole('button', { name: 'Search', exact: true }).click();
    await soon(() => bob.locator('#list-title').textContent()).toContain('quetzalcóatl');
    await soon(() => titles(bob)).toEqual([TITLE]);

    const mine = await api('/api/data/posts?published=false', await tokenOf(alice)).then((r) => r.json()) as { data: { items: Array<{ _id: string }> } };
    expect(mine.data.items).toHaveLength(1);
    const draftId = mine.data.items[0]!._id;
    expect((await api(`/api/data/posts/${draftId}`, await tokenOf(bob))).status).toBe(404);
    expect((await api(`/api/data/posts/${draftId}`, null)).status).toBe(404);
    // nor can Bob publish it for her: the update rule needs its author
    expect((await api(`/api/data/posts/${draftId}`, await tokenOf(bob), { method: 'PATCH', body: JSON.stringify({ published: true }) })).status).toBe(404);
  });

  it('the after-hook mailed Bob (a subscriber) about the published post, once; not Alice, its author; the draft nobody', async () => {
    const about = (m: { subject: string }) => m.subject === `New post: ${TITLE}`;
    await soon(async () => (await outbox()).filter(about).map((m) => [m.to, m.lastEvent])).toEqual([[['bob@example.com'], 'delivered']]);
    const mail = (await outbox()).find(about)!;
    expect(mail.text).toContain('Alice published “Voyage à Zürich 🚂 — un très long récit”.');
    expect(mail.text).toContain('# Voyage à Zürich 🚂 Un récit où l’on croise le mot **quetzalcóatl**');
    // the draft, saved meanwhile, was not announced; nobody else was mailed about a post (the
    // outbox also holds both sign-ups' verification mails)
    await new Promise((r) => setTimeout(r, 1000)); // a few more rounds of the job loop
    const posts = (await outbox()).filter((m) => m.subject.startsWith('New post: '));
    expect(posts.map((m) => [m.to[0], m.subject])).toEqual([['bob@example.com', `New post: ${TITLE}`]]);
    // the hook's own bookkeeping is the service's alone: no client reads it
    type Items = { data: { items: Array<Record<string, unknown>> } };
    const asAlice = await api('/api/data/announcements', await tokenOf(alice)).then((r) => r.json()) as Items;
    expect(asAlice.data.items).toEqual([]);
    const asService = await fetch(`${rig.base}/api/data/announcements`, { headers: { 'x-api-key': project.secretKey } }).then((r) => r.json()) as Items;
    expect(asService.data.items).toHaveLength(1);
    // and each reader sees her own subscription only
    const subs = await api('/api/data/subscribers', await tokenOf(bob)).then((r) => r.json()) as Items;
    expect(subs.data.items.map((s) => s.email)).toEqual(['bob@example.com']);
  });

  it("Bob comments; Alice sees the count, cannot edit his comment, and Bob can", async () => {
    await bob.getByRole('button', { name: 'All posts', exact: true }).click();
    await bob.locator('#posts li .open', { hasText: TITLE }).click();
    await bob.getByLabel('Comment', { exact: true }).fill('Magnifique, merci ! 👏');
    await bob.getByRole('button', { name: 'Add comment' }).click();
    await soon(() => bob.locator('#comments li .text').allTextContents()).toEqual(['Magnifique, merci ! 👏']);

    await alice.getByRole('button', { name: 'All posts', exact: true }).click();
    await soon(() => alice.locator('#posts li', { hasText: TITLE }).locator('.count').textContent()).toBe('1 comment');
    expect(await alice.locator('#posts li', { hasText: DRAFT }).locator('.count').textContent()).toBe('0 comments');
    await alice.locator('#posts li .open', { hasText: TITLE }).click();
    await soon(async () => [...await alice.locator('#comments li .text').allTextContents(), await alice.locator('#blog-error').textContent()]).toEqual(['Magnifique, merci ! 👏', '']);
    expect(await alice.locator('#comments li').getByRole('button', { name: 'Edit comment' }).count()).toBe(0);
    const commentId = await alice.locator('#comments li').first().getAttribute('data-id');
    const forged = await api(`/api/data/comments/${commentId}`, await tokenOf(alice), { method: 'PATCH', body: JSON.stringify({ text: 'edited by Alice' }) });
    expect(forged.status).toBe(403);

    await bob.getByRole('button', { name: 'Edit comment' }).click();
    await bob.getByLabel('Edit comment').fill('Magnifique, merci beaucoup ! 👏');
    await bob.getByRole('button', { name: 'Save comment' }).click();
    await soon(() => bob.locator('#comments li .text').allTextContents()).toEqual(['Magnifique, merci beaucoup ! 👏']);
  });

  it('the list pages through older posts with a cursor', async () => {
    const token = await tokenOf(alice);
    const me = await api('/api/userAuth/me', token).then((r) => r.json()) as { data: { _id: string } };
    const operations = Array.from({ length: 11 }, (_, i) => ({ op: 'create', collection: 'posts', data: { title: `Note ${String(i + 1).padStart(2, '0')}`, body: 'court', published: true, author: me.data._id, authorName: 'Alice' } }));
    expect((await api('/api/data/batch', token, { method: 'POST', body: JSON.stringify({ operations }) })).status).toBe(200);
    await bob.getByRole('button', { name: '← All posts' }).click();
    await soon(() => titles(bob).then((t) => t.length)).toBe(10);
    const first = await titles(bob);
    expect(first).not.toContain(TITLE);
    await bob.getByRole('button', { name: 'Older posts' }).click();
    await soon(() => titles(bob).then((t) => t.length)).toBe(12);
    const all = await titles(bob);
    expect(new Set(all).size).toBe(12);
    expect(all.at(-1)).toBe(TITLE);
    expect(all).not.toContain(DRAFT);
    expect(await bob.getByRole('button', { name: 'Older posts' }).isVisible()).toBe(false);
  });
});
