/**
 * The console as operators use it every day (issue 39), in Chromium: documents edited as forms
 * built from the schema and read back through the API, inline cell edits (Enter saves, Escape
 * cancels), the side panel beside the toolbar, saved filters in the console's own dialog, live
 * records, the webhooks screen against a loopback receiver checking signatures, search and
 * aggregates matching the API, the request log, the dark theme and compact density; axe on
 * each new screen in both themes; no horizontal scroll at 390 px.
 */
import os from 'node:os';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { drainJobs } from '../helpers/jobs.js';
import { startReceiver, type Receiver } from '../modules/webhooks/receiver.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { browserGate, expectAccessible, expectNoHorizontalScroll, openPage, shot, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-operations.e2e.test.ts');
let rig: Rig;
let op: TestOperator;
let p: TestProject;
let page: Page;
let problems: { errors: string[] };

const SCHEMA = [
  { key: 'title', type: 'String', required: true, searchable: true },
  { key: 'body', type: 'String', searchable: true },
  { key: 'price', type: 'Number' },
  { key: 'status', type: 'String' },
  { key: 'published', type: 'Boolean' },
  { key: 'publishedAt', type: 'Date' },
  { key: 'tags', type: 'Array', items: { type: 'String' } },
];
const LONG = 'A long description that goes on. '.repeat(8).trim();

async function api(method: string, url: string, body?: unknown) {
  const res = await rig.env.app.inject({ method: method as 'GET', url, headers: op.auth, ...(body !== undefined ? { payload: body as object } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json().data;
}
const data = (path = '') => `/api/projects/${p.id}/data/posts${path}`;
const rows = () => page.locator('table.grid tbody tr');
const rowOf = (id: string) => page.locator('table.grid tbody tr', { has: page.getByRole('button', { name: id, exact: true }) });

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  op = await makeOperator(rig.env.ctx, { email: 'ops@example.com' });
  p = await makeProject(rig.env.ctx, op, 'Operations');
  await api('POST', `/api/projects/${p.id}/collections`, { name: 'posts', schema: SCHEMA, realtime: true });
  const docs = Array.from({ length: 30 }, (_, i) => ({
    title: `Post ${i}`, body: i % 3 === 0 ? 'about gardens and roses' : 'about kitchens', price: i, status: ['draft', 'live', 'archived'][i % 3], published: i % 2 === 0, tags: [`t${i % 4}`],
  }));
  await api('POST', data('/bulk'), docs);
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => rig?.close());

describe.skipIf(!run)('console: everyday operations', { timeout: 120_000 }, () => {
  it('edits a Number, a Date and a long String through the form; the API reads them back', async () => {
    const id = (await api('GET', data('?title=Post%205'))).items[0]._id as string;
    await api('PATCH', data(`/${id}`), { body: LONG });
    await page.goto(`/_/#/p/${p.id}/data/posts?title=Post%205`);
    await rowOf(id).waitFor();
    await rowOf(id).getByRole('button', { name: id }).click();
    const panel = page.getByRole('complementary', { name: `Document ${id}` });
    // The long string is a text area, the number a number input, the date a date-time picker.
    await expect.poll(() => panel.getByLabel('body', { exact: true }).evaluate((el) => el.tagName)).toBe('TEXTAREA');
    expect(await panel.getByLabel('price', { exact: true }).getAttribute('type')).toBe('number');
    expect(await panel.getByLabel('publishedAt', { exact: true }).getAttribute('type')).toBe('datetime-local');
    expect(await panel.getByRole('switch', { name: 'published' }).count()).toBe(1);
    // The panel sits beside the toolbar: its buttons stay visible and clickable.
    const toolbar = page.locator('.toolbar');
    const [tb, pb] = [await toolbar.boundingBox(), await panel.boundingBox()];
    expect(tb!.x + tb!.width).toBeLessThanOrEqual(pb!.x + 1);
    await expect.poll(() => page.getByRole('button', { name: 'Count', exact: true }).isEnabled()).toBe(true);

    // A wrong value gets the API's message under the field, before anything is sent.
    await panel.getByLabel('price', { exact: true }).fill('');
    await panel.getByLabel('title', { exact: true }).fill('');
    await panel.locator('.field.invalid .form-error', { hasText: "Field 'title' is required." }).waitFor();
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    expect((await api('GET', data(`/${id}`))).title).toBe('Post 5');
    await panel.getByLabel('title', { exact: true }).fill('Post 5 edited');
    await panel.getByLabel('price', { exact: true }).fill('12.5');
    await panel.getByLabel('publishedAt', { exact: true }).fill('2026-03-04T05:06:07');
    const longer = `${LONG}\nSecond line with “quotes” and é.`;
    await panel.getByLabel('body', { exact: true }).fill(longer);
    await expectAccessible(page, 'document form');
    await shot(page, 'records-form', { doc: true });
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Document saved').waitFor();
    const saved = await api('GET', data(`/${id}`));
    expect(saved).toMatchObject({ title: 'Post 5 edited', price: 12.5, body: longer, publishedAt: new Date('2026-03-04T05:06:07').toISOString() });

    // Raw JSON is one click away and shows what the form holds.
    await panel.getByRole('button', { name: 'Raw JSON' }).click();
    await panel.locator('.json-editor .cm-content').waitFor();
    expect(await panel.locator('.json-editor .cm-content').textContent()).toContain('"price": 12.5');
    await panel.getByRole('button', { name: 'Form' }).click();
    expect(await panel.getByLabel('price', { exact: true }).inputValue()).toBe('12.5');

    // A new view closes the panel.
    await page.getByRole('button', { name: 'Clear' }).click();
    await panel.waitFor({ state: 'detached' });
  });

  it('creates a document with the "New document" form', async () => {
    await page.getByRole('button', { name: 'New document' }).click();
    const panel = page.getByRole('complementary', { name: 'New document' });
    await panel.getByLabel('title', { exact: true }).fill('Made in the form');
    await panel.getByLabel('price', { exact: true }).fill('7');
    await panel.getByLabel('tags', { exact: true }).fill('["a", "b"]');
    await panel.getByRole('switch', { name: 'published' }).check();
    await panel.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Document created').waitFor();
    const made = (await api('GET', data('?title=Made%20in%20the%20form'))).items[0];
    expect(made).toMatchObject({ title: 'Made in the form', price: 7, tags: ['a', 'b'], published: true });
    expect(made).not.toHaveProperty('body');
  });

  it('edits a cell in place: Enter saves, Escape cancels', async () => {
    await page.goto(`/_/#/p/${p.id}/data/posts?title=Post%207`);
    const id = (await api('GET', data('?title=Post%207'))).items[0]._id as string;
    const price = rowOf(id).locator('td[data-field=price]');
    await price.dblclick();
    const input = rowOf(id).getByLabel('Edit price');
    await input.fill('70');
    await input.press('Escape');
    await input.waitFor({ state: 'detached' });
    expect((await api('GET', data(`/${id}`))).price).toBe(7);
    expect(await price.textContent()).toBe('7');

    await price.dblclick();
    await input.fill('71');
    await input.press('Enter');
    await input.waitFor({ state: 'detached' });
    await expect.poll(() => price.textContent()).toBe('71');
    expect((await api('GET', data(`/${id}`))).price).toBe(71);

    const title = rowOf(id).locator('td[data-field=title]');
    await title.dblclick();
    await rowOf(id).getByLabel('Edit title').fill('Seven');
    await rowOf(id).getByLabel('Edit title').press('Enter');
    await expect.poll(async () => (await api('GET', data(`/${id}`))).title).toBe('Seven');
  });

  it('names, renames and deletes saved filters in its own dialog (never window.prompt)', async () => {
    page.on('dialog', (d) => {
      problems.errors.push(`native dialog: ${d.message()}`);
      void d.dismiss();
    });
    await page.goto(`/_/#/p/${p.id}/data/posts?status=live`);
    await rows().first().waitFor();
    await page.getByText('Query string, saved filters, AI').click();
    await page.getByRole('button', { name: 'Save current…' }).click();
    const longName = 'Live posts that a very long name describes in far more words than fit on one line of the dialog';
    await page.getByRole('dialog', { name: 'Save this filter' }).getByLabel('Name').fill(longName);
    await page.getByRole('dialog').getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Manage…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Saved filters' });
    await dialog.getByText(longName).waitFor();
    const [box, text] = [await dialog.boundingBox(), await dialog.getByText(longName).boundingBox()];
    expect(text!.x + text!.width).toBeLessThanOrEqual(box!.x + box!.width);
    await expectAccessible(page, 'saved filters dialog');
    await dialog.getByRole('button', { name: `Rename ${longName}` }).click();
    await dialog.getByLabel(`New name for ${longName}`).fill('live');
    await dialog.getByRole('button', { name: 'Rename', exact: true }).click();
    await dialog.getByText('live', { exact: true }).waitFor();
    const stored = () => page.evaluate(() => JSON.parse(localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith('plinth.filters.'))!) ?? '[]'));
    expect(await stored()).toEqual([{ name: 'live', query: 'status=live' }]);
    await dialog.getByRole('button', { name: 'Delete live' }).click();
    await dialog.getByText('No saved filter.').waitFor();
    expect(await stored()).toEqual([]);
    await dialog.getByRole('button', { name: 'Done' }).click();
    expect(problems.errors).toEqual([]);
  });

  it('records at 390 px: no horizontal scroll, the panel below the toolbar', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      await page.goto(`/_/#/p/${p.id}/data/posts`);
      await rows().first().waitFor();
      await expectNoHorizontalScroll(page, 'records');
      await rows().first().getByRole('button').nth(0).click();
      const panel = page.locator('aside.panel');
      await panel.waitFor();
      await expectNoHorizontalScroll(page, 'records with the panel');
      const [tb, pb] = [await page.locator('.toolbar').boundingBox(), await panel.boundingBox()];
      expect(pb!.y).toBeGreaterThanOrEqual(tb!.y + tb!.height);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('live records: a document created elsewhere appears within a second, marked; editing pauses the view', async () => {
    // A fresh load: the test before leaves a document open in the panel, which pauses the view.
    await page.goto(`/_/#/p/${p.id}/data/posts`);
    await page.reload();
    await rows().first().waitFor();
    await page.locator('.live-badge.live').waitFor();
    // Another context: a second browser page of the same operator writes through the API.
    const other = await page.context().newPage();
    try {
      await other.goto(`/_/#/p/${p.id}/data/posts`);
      const created = await other.evaluate(async (url) => {
        const csrf = decodeURIComponent(document.cookie.split('; ').find((c) => c.startsWith('csrfToken='))!.split('=')[1]!);
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify({ title: 'Arrived live' }) });
        return ((await res.json()) as { data: { _id: string } }).data._id;
      }, data());
      const started = Date.now();
      await rowOf(created).waitFor({ timeout: 5000 });
      const elapsed = Date.now() - started;
      // One second on an idle machine; this shared 2-core machine often runs at a load of 20+,
      // where every step (poll, event, render) waits its turn: the bound scales with the load.
      const load = Math.max(1, os.loadavg()[0]! / os.cpus().length);
      console.log(`live records: a document created in another context visible after ${elapsed} ms (load ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores)`);
      expect(elapsed).toBeLessThan(1000 * load);
      expect(await rowOf(created).getAttribute('class')).toContain('changed');

      // While the panel is open the view waits, says so, and catches up when it closes.
      await rowOf(created).getByRole('button', { name: created }).click();
      await page.locator('.live-badge.paused').waitFor();
      await api('POST', data(), { title: 'Arrived while paused' });
      await page.getByText('1 change waiting').waitFor();
      expect(await page.locator('table.grid tbody').textContent()).not.toContain('Arrived while paused');
      await page.getByRole('button', { name: 'Close the panel' }).click();
      await page.locator('table.grid tbody', { hasText: 'Arrived while paused' }).waitFor({ timeout: 3000 });
    } finally {
      await other.close();
    }
  });

  it('webhooks: adds an endpoint (secret shown once), sends a test, redelivers; the receiver checks every signature', async () => {
    const rx: Receiver = await startReceiver();
    let verified = 0;
    let secret = '';
    rx.answer = (req) => {
      // Standard Webhooks: the receiver verifies with the secret the console showed.
      new Webhook(secret).verify(req.body, req.headers as Record<string, string>);
      verified++;
      return { status: 200, body: `received ${verified}` };
    };
    try {
      await page.goto(`/_/#/p/${p.id}/webhooks`);
      await page.getByText('No webhook endpoint yet').waitFor();
      await expectAccessible(page, 'webhooks (empty)');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
      await dialog.getByLabel('URL').fill(`${rx.url}/hook`);
      await dialog.getByLabel('Description').fill('Search indexer');
      await dialog.getByRole('checkbox', { name: 'create' }).check();
      await dialog.getByRole('checkbox', { name: 'posts' }).check();
      await dialog.getByRole('button', { name: 'Add endpoint' }).click();
      secret = (await page.locator('.secret-once code.secret').textContent())!;
      expect(secret).toMatch(/^whsec_/);
      const [endpoint] = await api('GET', `/api/projects/${p.id}/webhooks`);
      expect(endpoint).toMatchObject({ url: `${rx.url}/hook`, events: ['create'], collections: ['posts'], enabled: true });
      await page.getByRole('button', { name: 'I have kept it' }).click();
      expect(await page.locator('.secret-once').count()).toBe(0);

      await page.getByRole('button', { name: 'Send test' }).click();
      await page.getByText('Test event: HTTP 200').waitFor();
      const log = page.getByRole('region', { name: 'Deliveries' });
      await log.getByText('webhook.test').waitFor();
      expect(verified).toBe(1);
      await log.locator('summary').first().click();
      await log.getByRole('cell', { name: 'received 1' }).waitFor();
      await expectAccessible(page, 'webhooks with deliveries');
      await shot(page, 'webhooks', { doc: true });

      await log.getByRole('button', { name: /^Redeliver / }).first().click();
      await page.getByText('Redelivery queued').waitFor();
      await drainJobs(rig.env);
      await expect.poll(() => verified, { timeout: 10_000 }).toBe(2);
      await log.getByRole('button', { name: 'Refresh' }).click();
      await log.getByText('2 attempts').waitFor();
      const ids = rx.received.map((r) => r.headers['webhook-id']);
      expect(ids[0]).toBe(ids[1]);

      await page.getByRole('button', { name: 'Disable' }).click();
      await page.getByText('Endpoint disabled').waitFor();
      expect((await api('GET', `/api/projects/${p.id}/webhooks`))[0].enabled).toBe(false);
      await page.getByRole('button', { name: 'Enable' }).click();
      await page.getByText('Endpoint enabled').waitFor();

      await page.setViewportSize({ width: 390, height: 800 });
      await expectNoHorizontalScroll(page, 'webhooks');
      await page.setViewportSize({ width: 1280, height: 800 });
    } finally {
      await rx.close();
    }
  });

  it('query tools: a search and a grouped count match the API; the batch editor changes several documents at once', async () => {
    await page.goto(`/_/#/p/${p.id}/data/posts?limit=100`);
    await rows().first().waitFor();
    await page.getByRole('search').getByRole('searchbox').fill('gardens');
    await page.getByRole('search').getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.url()).toContain('search=gardens');
    const expected = (await api('GET', data('?search=gardens&count=true'))).count as number;
    expect(expected).toBeGreaterThan(0);
    await expect.poll(() => rows().count()).toBe(expected);
    expect((await rows().allTextContents()).every((t) => t.includes('gardens'))).toBe(true);
    await page.getByRole('button', { name: 'Clear search' }).click();
    await expect.poll(() => page.url()).not.toContain('search=');

    await page.getByRole('button', { name: 'Aggregate' }).click();
    await page.getByLabel('Group by').selectOption('status');
    await page.getByRole('button', { name: 'Compute' }).click();
    const table = page.locator('table.agg-table');
    await table.waitFor();
    const fromApi = (await api('GET', data('/aggregate?groupBy=status&count=true'))).groups as Array<{ key: { status: string | null }; count: number }>;
    const shown = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)));
    expect(Object.fromEntries(shown.map(([k, v]) => [k, Number(v)]))).toEqual(Object.fromEntries(fromApi.map((g) => [g.key.status ?? '(none)', g.count])));
    await expectAccessible(page, 'aggregate panel');
    await shot(page, 'records-aggregate', { doc: true });
    await page.getByRole('button', { name: 'Aggregate' }).click();

    const boxes = page.locator('table.grid tbody input[type=checkbox]');
    await boxes.nth(0).click();
    await page.getByText('1 selected').waitFor();
    await boxes.nth(1).click();
    await page.getByText('2 selected').waitFor();
    const ids = await rows().evaluateAll((trs) => trs.slice(0, 2).map((tr) => tr.querySelector('button.link')!.textContent!));
    await page.getByRole('button', { name: 'Edit fields…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit 2 documents' });
    await dialog.getByLabel('Field of change 1').selectOption('price');
    await dialog.getByLabel('New value of change 1').fill('99');
    await dialog.getByRole('button', { name: 'Add a change' }).click();
    await dialog.getByLabel('Field of change 2').selectOption('status');
    await dialog.getByLabel('New value of change 2').fill('batched');
    await expectAccessible(page, 'batch editor');
    await dialog.getByRole('button', { name: 'Apply to 2 documents' }).click();
    await page.getByText('2 documents updated in one batch').waitFor();
    for (const id of ids) expect(await api('GET', data(`/${id}`))).toMatchObject({ price: 99, status: 'batched' });
  });
});
