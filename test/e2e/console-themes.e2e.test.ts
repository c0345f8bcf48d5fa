/**
 * The console's themes and density in Chromium (issue 39 item 7): the dark theme follows the
 * system setting unless the operator picks one (remembered in this browser), the compact grid
 * density is remembered too; allowed values (`enum`) are offered as selects in the document
 * form, the grid's inline editor and the batch editor, and what is chosen is what the API reads
 * back. Then every console screen, in the light and in the dark system setting, passes axe
 * (no serious or critical violation), and the records and webhooks screens have no horizontal
 * scroll at 390 px. With PLINTH_DOC_SCREENSHOTS=1 it refreshes docs/images (both themes).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/lib/identity/totp.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../modules/webhooks/receiver.js';
import { browserGate, expectAccessible, expectNoHorizontalScroll, openPage, shot, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-themes.e2e.test.ts');
let rig: Rig;
let rx: Receiver;
let op: TestOperator;
let enrolled: TestOperator;
let p: TestProject;
let endpointId: string;
let page: Page;
let problems: { errors: string[] };

const STATUSES = ['draft', 'live', 'archived'];
const SCHEMA = [
  { key: 'title', type: 'String', required: true, searchable: true },
  { key: 'body', type: 'String', searchable: true },
  { key: 'status', type: 'String', enum: STATUSES, default: 'draft' },
  { key: 'stars', type: 'Number', enum: [1, 2, 3, 4, 5] },
  { key: 'price', type: 'Number' },
  { key: 'published', type: 'Boolean' },
  { key: 'publishedAt', type: 'Date' },
  { key: 'tags', type: 'Array', items: { type: 'String' } },
];

async function api(method: string, url: string, body?: unknown, headers: Record<string, string> = op.auth) {
  const res = await rig.env.app.inject({ method: method as 'GET', url, headers, ...(body !== undefined ? { payload: body as object } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json().data;
}
const data = (path = '') => `/api/projects/${p.id}/data/posts${path}`;
const rows = () => page.locator('table.grid tbody tr');
const rowOf = (id: string) => page.locator('table.grid tbody tr', { has: page.getByRole('button', { name: id, exact: true }) });
const nav = (label: string) => page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: label, exact: true });

/** The page's background colour as the browser computed it (the theme actually applied). */
const background = (pg: Page = page) => pg.evaluate(() => getComputedStyle(document.body).backgroundColor);
const LIGHT_BG = 'rgb(246, 247, 249)';
const DARK_BG = 'rgb(13, 17, 23)';

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  rx = await startReceiver();
  op = await makeOperator(rig.env.ctx, { email: 'themes@example.com' });
  p = await makeProject(rig.env.ctx, op, 'Themes');
  await api('POST', `/api/projects/${p.id}/collections`, { name: 'posts', schema: SCHEMA, realtime: true });
  await api('POST', data('/bulk'), Array.from({ length: 12 }, (_, i) => ({
    title: `Post ${i}`, body: i % 3 === 0 ? 'about gardens and roses' : 'about kitchens', status: STATUSES[i % 3], stars: 1 + (i % 5), price: i, published: i % 2 === 0, tags: [`t${i % 4}`],
  })));
  // A webhook endpoint with one delivery in its log (a test event to a loopback receiver).
  const { endpoint } = await api('POST', `/api/projects/${p.id}/webhooks`, { url: `${rx.url}/hook`, description: 'Search indexer', events: ['create'], collections: ['posts'] });
  endpointId = endpoint._id;
  await api('POST', `/api/projects/${p.id}/webhooks/${endpointId}/test`);
  // An operator with an authenticator app, for the two-step sign-in screen.
  enrolled = await makeOperator(rig.env.ctx, { email: 'two-step@example.com' });
  const { secret } = await api('POST', '/api/auth/mfa/totp/enroll', undefined, enrolled.auth);
  await api('POST', '/api/auth/mfa/totp/confirm', { code: totpCode(secret, rig.env.clock.now()) }, enrolled.auth);
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
  // A saved filter, so the "Saved filters" dialog has a row.
  await page.evaluate((key) => localStorage.setItem(key, JSON.stringify([{ name: 'live posts', query: 'status=live' }])), `plinth.filters.${p.id}.posts`);
}, 120_000);
afterAll(async () => {
  await rig?.close();
  await rx?.close();
});

describe.skipIf(!run)('console: themes, density, allowed values; axe in both themes', { timeout: 300_000 }, () => {
  it('the theme follows the system setting until the operator picks one, which this browser remembers', async () => {
    await page.goto('/_/#/projects');
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => background()).toBe(DARK_BG);
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(() => background()).toBe(LIGHT_BG);

    const menu = page.locator('summary', { hasText: 'Display' });
    await menu.click();
    expect(await page.getByRole('radio', { name: 'System setting' }).isChecked()).toBe(true);
    await page.getByRole('radio', { name: 'Dark' }).check();
    await expect.poll(() => background()).toBe(DARK_BG);
    // The operator's choice wins over the system's, and survives a reload.
    await page.reload();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect(await background()).toBe(DARK_BG);
    expect(await page.evaluate(() => localStorage.getItem('plinth.theme'))).toBe('"dark"');
    await page.emulateMedia({ colorScheme: 'dark' });
    await menu.click();
    await page.getByRole('radio', { name: 'Light' }).check();
    await expect.poll(() => background()).toBe(LIGHT_BG);
    expect(await page.evaluate(() => getComputedStyle(document.documentElement).colorScheme)).toBe('light');
    // Escape closes the menu, focus back on its button.
    await page.keyboard.press('Escape');
    expect(await page.locator('details.display-menu').getAttribute('open')).toBeNull();
    await menu.click();
    await page.getByRole('radio', { name: 'System setting' }).check();
    await expect.poll(() => background()).toBe(DARK_BG);
    expect(await page.evaluate(() => document.documentElement.dataset.theme ?? null)).toBeNull();
    await page.keyboard.press('Escape');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('compact density: a toggle on the records screen tightens the grid, remembered after a reload', async () => {
    await page.goto(`/_/#/p/${p.id}/data/posts`);
    await rows().first().waitFor();
    const rowHeight = () => rows().first().evaluate((tr) => tr.getBoundingClientRect().height);
    const comfortable = await rowHeight();
    await page.getByRole('checkbox', { name: 'Compact rows' }).check();
    await expect.poll(rowHeight).toBeLessThan(comfortable);
    const compact = await rowHeight();
    console.log(`grid density: row height ${comfortable.toFixed(1)} px comfortable, ${compact.toFixed(1)} px compact`);
    await page.reload();
    await rows().first().waitFor();
    expect(await page.getByRole('checkbox', { name: 'Compact rows' }).isChecked()).toBe(true);
    expect(await rowHeight()).toBeCloseTo(compact, 0);
    await expectAccessible(page, 'records (compact)');
    await shot(page, 'records-compact', { doc: true });
    // The Display menu says the same and can undo it.
    await page.locator('summary', { hasText: 'Display' }).click();
    expect(await page.getByRole('radio', { name: 'Compact' }).isChecked()).toBe(true);
    await page.getByRole('radio', { name: 'Comfortable' }).check();
    await page.keyboard.press('Escape');
    await expect.poll(rowHeight).toBeCloseTo(comfortable, 0);
    expect(await page.getByRole('checkbox', { name: 'Compact rows' }).isChecked()).toBe(false);
  });

  it('allowed values are selects in the form, the inline editor and the batch editor; the API reads the choice back', async () => {
    const id = (await api('GET', data('?title=Post%204'))).items[0]._id as string;
    await page.goto(`/_/#/p/${p.id}/data/posts?title=Post%204`);
    await rowOf(id).waitFor();
    // Inline: a select of the allowed values; Escape leaves the value, Enter saves the choice.
    const stars = rowOf(id).locator('td[data-field=stars]');
    await stars.dblclick();
    const inline = rowOf(id).getByLabel('Edit stars');
    expect(await inline.evaluate((el) => el.tagName)).toBe('SELECT');
    expect(await inline.locator('option').allTextContents()).toEqual(['(none)', '1', '2', '3', '4', '5']);
    await inline.selectOption('2');
    await inline.press('Escape');
    await inline.waitFor({ state: 'detached' });
    expect((await api('GET', data(`/${id}`))).stars).toBe(5);
    await stars.dblclick();
    await inline.selectOption('3');
    await inline.press('Enter');
    await inline.waitFor({ state: 'detached' });
    await expect.poll(() => stars.textContent()).toBe('3');
    expect((await api('GET', data(`/${id}`))).stars).toBe(3);

    // The form: a select too, the hint says how many values.
    await rowOf(id).getByRole('button', { name: id }).click();
    const panel = page.getByRole('complementary', { name: `Document ${id}` });
    const status = panel.getByLabel('status', { exact: true });
    await status.waitFor();
    expect(await status.evaluate((el) => el.tagName)).toBe('SELECT');
    expect(await status.locator('option').allTextContents()).toEqual(['(none)', ...STATUSES]);
    expect(await status.inputValue()).toBe('live');
    await status.selectOption('archived');
    await panel.getByLabel('stars', { exact: true }).selectOption('5');
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Document saved').waitFor();
    expect(await api('GET', data(`/${id}`))).toMatchObject({ status: 'archived', stars: 5 });
    await page.getByRole('button', { name: 'Close the panel' }).click();

    // A value stored before the list was narrowed is shown, marked, and not changed by opening it.
    await api('PATCH', `/api/projects/${p.id}/collections/posts`, { schema: SCHEMA.map((f) => (f.key === 'status' ? { ...f, enum: ['draft', 'live'] } : f)) });
    await page.reload();
    await rowOf(id).getByRole('button', { name: id }).click();
    await expect.poll(() => panel.getByLabel('status', { exact: true }).inputValue()).toBe('archived');
    expect(await panel.getByLabel('status', { exact: true }).locator('option:checked').textContent()).toBe('archived (not allowed)');
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    await panel.locator('.form-error', { hasText: "Field 'status' must be one of 'draft', 'live'." }).waitFor();
    await page.getByRole('button', { name: 'Close the panel' }).click();
    await api('PATCH', `/api/projects/${p.id}/collections/posts`, { schema: SCHEMA });
    await page.reload();
    await rowOf(id).waitFor();

    // The batch editor offers the same select.
    await page.goto(`/_/#/p/${p.id}/data/posts?status=draft`);
    await rows().first().waitFor();
    const boxes = page.locator('table.grid tbody input[type=checkbox]');
    await boxes.nth(0).click();
    await boxes.nth(1).click();
    const ids = await rows().evaluateAll((trs) => trs.slice(0, 2).map((tr) => tr.querySelector('button.link')!.textContent!));
    await page.getByRole('button', { name: 'Edit fields…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit 2 documents' });
    await dialog.getByLabel('Field of change 1').selectOption('status');
    await dialog.getByLabel('New value of change 1').selectOption('live');
    await dialog.getByRole('button', { name: 'Apply to 2 documents' }).click();
    await page.getByText('2 documents updated in one batch').waitFor();
    for (const doc of ids) expect((await api('GET', data(`/${doc}`))).status).toBe('live');

    // The schema editor shows and edits the list.
    await page.goto(`/_/#/p/${p.id}/collections/posts`);
    const allowed = page.getByLabel('Allowed values of status (comma-separated)');
    expect(await allowed.inputValue()).toBe('draft, live, archived');
    await allowed.fill('draft, live, archived, retired');
    await page.getByRole('button', { name: 'Save schema' }).click();
    await page.getByText('Schema saved').waitFor();
    const model = (await api('GET', `/api/projects/${p.id}/collections/posts`)).model as Array<{ key: string; enum?: unknown[] }>;
    expect(model.find((f) => f.key === 'status')!.enum).toEqual(['draft', 'live', 'archived', 'retired']);
    expect(model.find((f) => f.key === 'stars')!.enum).toEqual([1, 2, 3, 4, 5]);
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`every console screen passes axe in the ${scheme} theme`, async () => {
      await page.emulateMedia({ colorScheme: scheme });
      const doc = (name: string) => shot(page, scheme === 'light' ? name : `${name}-dark`, { doc: true });
      const check = async (screen: string) => {
        expect(await background(), `${screen}: the ${scheme} theme is applied`).toBe(scheme === 'light' ? LIGHT_BG : DARK_BG);
        await expectAccessible(page, `${screen} (${scheme})`);
      };

      // Signed out: sign-in and the two-step sign-in, in a context of their own.
      const context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: rig.base, colorScheme: scheme });
      try {
        const out = await context.newPage();
        await out.goto('/_/#/login');
        await out.getByLabel('Email').waitFor();
        expect(await background(out)).toBe(scheme === 'light' ? LIGHT_BG : DARK_BG);
        await expectAccessible(out, `sign in (${scheme})`);
        await shot(out, scheme === 'light' ? 'sign-in' : 'sign-in-dark', { doc: true });
        await out.getByLabel('Email').fill(enrolled.email);
        await out.getByLabel('Password').fill(enrolled.password);
        await out.getByRole('button', { name: 'Sign in' }).click();
        await out.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
        await expectAccessible(out, `two-step sign-in (${scheme})`);
      } finally {
        await context.close();
      }

      await page.goto('/_/#/projects');
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      await check('projects');
      await page.locator('summary', { hasText: 'Display' }).click();
      await page.getByRole('radio', { name: 'System setting' }).waitFor();
      await check('display menu');
      await page.keyboard.press('Escape');
      // Escape puts the focus back on "Display"; the screenshots below need no focus ring there.
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());

      await page.goto(`/_/#/p/${p.id}/collections`);
      await page.getByRole('link', { name: 'posts' }).first().waitFor();
      await check('collections');
      await page.goto(`/_/#/p/${p.id}/collections/posts`);
      await page.getByRole('form', { name: 'Access rules' }).waitFor();
      await check('collection schema and rules editor');
      await doc('schema-edit');

      // Records: the live grid, inline edit, the form, a new document, search and aggregate,
      // saved filters, the batch editor.
      await page.goto(`/_/#/p/${p.id}/data/posts`);
      await rows().first().waitFor();
      await page.locator('.live-badge.live').waitFor();
      await check('records (live)');
      await doc('records');
      await rows().first().locator('td[data-field=status]').dblclick();
      await rows().first().getByLabel('Edit status').waitFor();
      await check('records inline edit');
      await rows().first().getByLabel('Edit status').press('Escape');
      await rows().first().getByRole('button').first().click();
      await page.locator('aside.panel').getByLabel('status', { exact: true }).waitFor();
      await page.locator('.live-badge.paused').waitFor();
      await check('document form (paused live view)');
      await doc('records-panel');
      await page.locator('aside.panel').getByRole('button', { name: 'Raw JSON' }).click();
      await page.locator('.json-editor .cm-content').waitFor();
      await check('document raw JSON');
      await page.getByRole('button', { name: 'Close the panel' }).click();
      await page.getByRole('button', { name: 'New document' }).click();
      await page.getByRole('complementary', { name: 'New document' }).waitFor();
      await check('new document form');
      await page.getByRole('button', { name: 'Close the panel' }).click();

      await page.getByRole('search').getByRole('searchbox').fill('gardens');
      await page.getByRole('search').getByRole('button', { name: 'Search', exact: true }).click();
      await expect.poll(() => page.url()).toContain('search=gardens');
      await page.getByRole('button', { name: 'Aggregate' }).click();
      await page.getByLabel('Group by').selectOption('status');
      await page.getByRole('button', { name: 'Compute' }).click();
      await page.locator('table.agg-table').waitFor();
      await check('search and aggregate panel');
      await doc('records-aggregate');
      await page.getByRole('button', { name: 'Aggregate' }).click();
      await page.getByRole('button', { name: 'Clear search' }).click();
      await expect.poll(() => page.url()).not.toContain('search=');

      await page.getByText('Query string, saved filters, AI').click();
      await page.getByRole('button', { name: 'Save current…' }).waitFor();
      await page.getByRole('button', { name: 'Manage…' }).click();
      await page.getByRole('dialog', { name: 'Saved filters' }).getByText('live posts').waitFor();
      await check('saved filters dialog');
      await page.getByRole('dialog').getByRole('button', { name: 'Done' }).click();

      await rows().first().waitFor();
      const boxes = page.locator('table.grid tbody input[type=checkbox]');
      await boxes.nth(0).click();
      await boxes.nth(1).click();
      await page.getByRole('region', { name: 'Bulk actions' }).waitFor();
      await check('records with a selection');
      await page.getByRole('button', { name: 'Edit fields…' }).click();
      const batch = page.getByRole('dialog', { name: 'Edit 2 documents' });
      await batch.getByLabel('Field of change 1').selectOption('status');
      await check('batch editor');
      await batch.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('button', { name: 'Clear selection' }).click();

      // Webhooks: endpoints with a delivery opened, and the "add" dialog.
      await page.goto(`/_/#/p/${p.id}/webhooks/${endpointId}`);
      const log = page.getByRole('region', { name: 'Deliveries' });
      await log.getByText('webhook.test').waitFor();
      await log.locator('summary').first().click();
      await log.getByRole('cell', { name: 'ok' }).waitFor();
      await check('webhooks');
      await doc('webhooks');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('dialog', { name: 'Add a webhook endpoint' }).waitFor();
      await check('add a webhook endpoint');
      await page.keyboard.press('Escape');

      // The other project screens.
      await nav('Users').click();
      await page.getByRole('heading', { name: 'Users' }).waitFor();
      await check('users');
      await nav('Files').click();
      await page.getByText('No files yet').waitFor();
      await check('files');
      await nav('Mail').click();
      await page.getByRole('heading', { name: 'Own Resend account' }).waitFor();
      await check('mail');
      await nav('AI').click();
      await page.getByRole('heading', { name: 'Query builder' }).waitFor();
      await check('AI');
      await nav('Usage').click();
      await page.getByRole('img', { name: 'Usage against plan limits' }).waitFor();
      await check('usage');
      await doc('usage');
      await nav('Settings').click();
      await page.getByRole('heading', { name: 'API keys' }).waitFor();
      await check('settings');
      await doc('settings');

      // Account: second factors (passkeys, authenticator app) and the app's enrolment.
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
      await check('account');
      await page.getByRole('button', { name: 'Set up authenticator app' }).click();
      await page.getByRole('img', { name: /QR code/ }).waitFor();
      await check('authenticator enrolment');
    });

    it(`records and webhooks at 390 px, ${scheme} theme: no horizontal scroll`, async () => {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width: 390, height: 800 });
      try {
        await page.goto(`/_/#/p/${p.id}/data/posts`);
        await rows().first().waitFor();
        await expectNoHorizontalScroll(page, `records (${scheme})`);
        await rows().first().getByRole('button').first().click();
        await page.locator('aside.panel').getByLabel('status', { exact: true }).waitFor();
        await expectNoHorizontalScroll(page, `records with the form (${scheme})`);
        await expectAccessible(page, `records with the form at 390 px (${scheme})`);
        await page.goto(`/_/#/p/${p.id}/webhooks/${endpointId}`);
        const log = page.getByRole('region', { name: 'Deliveries' });
        await log.getByText('webhook.test').waitFor();
        await log.locator('summary').first().click();
        await expectNoHorizontalScroll(page, `webhooks (${scheme})`);
        await expectAccessible(page, `webhooks at 390 px (${scheme})`);
      } finally {
        await page.setViewportSize({ width: 1280, height: 800 });
      }
    });
  }

  it('left no console error or CSP violation', () => {
    expect(problems.errors).toEqual([]);
  });
});

