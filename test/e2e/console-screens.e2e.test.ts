/**
 * The other console screens in Chromium, each with its main flow and an accessibility check:
 * collections (create with nested Object, Array and Ref fields; schema edit with a compound
 * index; RLS; the AI schema assistant; delete by name), end users (search, disable, sessions,
 * delete), files (upload, image preview, delete), mail (template with live preview, dev
 * outbox, logs), AI (query builder into the records browser), usage charts, account, admin.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGroq, type FakeGroq } from '../fakes/groq.js';
import { drainJobs } from '../helpers/jobs.js';
import { makeOperator, makeProject, USERS_FIELDS, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { browserGate, expectAccessible, openPage, shot, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-screens.e2e.test.ts');
let rig: Rig;
let groq: FakeGroq;
let op: TestOperator;
let other: TestOperator;
let p: TestProject;
let page: Page;
let problems: { errors: string[] };

async function call(method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const res = await rig.env.app.inject({ method: method as 'GET', url, headers, ...(body !== undefined ? { payload: body as object } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}
const nav = (label: string) => page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: label, exact: true });

beforeAll(async () => {
  if (!run) return;
  groq = await startFakeGroq();
  rig = await startRig({ GROQ_API_KEY: 'gsk_platform', GROQ_BASE_URL: groq.baseUrl, ADMIN_EMAIL: 'admin@example.com' });
  op = await makeOperator(rig.env.ctx, { email: 'admin@example.com' });
  other = await makeOperator(rig.env.ctx, { email: 'other@example.com' });
  p = await makeProject(rig.env.ctx, op, 'Blog');
  await call('POST', `/api/projects/${p.id}/collections`, op.auth, { name: 'users', schema: USERS_FIELDS });
  await call('POST', `/api/projects/${p.id}/collections`, op.auth, { name: 'authors', schema: [{ key: 'name', type: 'String' }] });
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => {
  await rig?.close();
  await groq?.close();
});

describe.skipIf(!run)('console screens', { timeout: 120_000 }, () => {
  it('collections: creates one with nested, array and ref fields, edits the schema, indexes and RLS, deletes it', async () => {
    await page.goto(`/_/#/p/${p.id}/collections`);
    await page.getByRole('link', { name: 'authors' }).first().waitFor();
    await expectAccessible(page, 'collections');
    await page.getByRole('link', { name: 'New collection' }).click();
    await page.getByLabel('Name', { exact: true }).fill('posts');
    await page.getByLabel('Name of field 1').fill('title');
    await page.getByText('required').first().click();
    const add = () => page.getByRole('button', { name: 'Add field', exact: true }).click();
    await add();
    await page.getByLabel('Name of field 2').fill('author');
    await page.getByLabel('Type of author').selectOption('Ref');
    await page.getByLabel('Target collection of author').selectOption('authors');
    await add();
    await page.getByLabel('Name of field 3').fill('tags');
    await page.getByLabel('Type of tags').selectOption('Array');
    await add();
    await page.getByLabel('Name of field 4').fill('address');
    await page.getByLabel('Type of address').selectOption('Object');
    await page.getByRole('button', { name: 'Add nested field' }).click();
    await page.getByLabel('Name of field 1').last().fill('city');
    await expectAccessible(page, 'new collection');
    await shot(page, 'schema-new');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('heading', { name: 'posts' }).waitFor();
    const created = (await call('GET', `/api/projects/${p.id}/collections/posts`, op.auth)).data;
    expect(created.model).toEqual([
      { key: 'title', type: 'String', required: true },
      { key: 'author', type: 'Ref', ref: 'authors' },
      { key: 'tags', type: 'Array', items: { type: 'String' } },
      { key: 'address', type: 'Object', fields: [{ key: 'city', type: 'String' }] },
    ]);

    await add();
    await page.getByLabel('Name of field 5').fill('views');
    await page.getByLabel('Type of views').selectOption('Number');
    await page.getByRole('button', { name: 'Add index' }).click();
    await page.getByLabel('Index 1 fields (comma-separated)').fill('title, views');
    await page.getByRole('button', { name: 'Save schema' }).click();
    await page.getByText('Schema saved').waitFor();
    await page.getByText('Schema version 2.').waitFor();
    await page.getByLabel('Enabled (publishable-key writes by signed-in users)').check();
    await page.getByLabel('Mode').selectOption('private');
    await page.getByLabel("Owner field (holds the owner's user id)").selectOption('author');
    await page.getByRole('button', { name: 'Save row-level security' }).click();
    await page.getByText('Row-level security saved').waitFor();
    await expectAccessible(page, 'collection schema');
    await shot(page, 'schema-edit', { doc: true });
    const edited = (await call('GET', `/api/projects/${p.id}/collections/posts`, op.auth)).data;
    expect(edited.schemaVersion).toBe(2);
    expect(edited.indexes).toEqual([{ fields: ['title', 'views'] }]);
    expect(edited.rls).toMatchObject({ enabled: true, mode: 'private', ownerField: 'author' });

    groq.enqueue({ content: JSON.stringify({ collectionName: 'posts', fields: [{ key: 'headline', type: 'String', required: true }], explanation: 'A headline.' }) });
    await page.getByText('Schema assistant (AI)').click();
    await page.getByLabel('Describe the data').fill('posts with a headline');
    await page.getByRole('button', { name: 'Suggest' }).click();
    await page.getByLabel('Name of headline').waitFor();

    await page.reload();
    await page.getByRole('button', { name: 'Delete collection' }).click();
    await page.getByLabel('Type “posts” to confirm').fill('posts');
    await page.getByRole('dialog').getByRole('button', { name: 'Delete collection' }).click();
    await page.getByRole('heading', { name: 'Collections' }).waitFor();
    expect((await rig.env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/collections/posts`, headers: op.auth })).statusCode).toBe(404);
  });

  it('users: searches, disables (login refused), shows sessions, deletes', async () => {
    for (const email of ['ann@example.com', 'bob@example.com']) {
      await call('POST', '/api/userAuth/signup', p.pk, { email, password: 'correct horse 1' });
    }
    await nav('Users').click();
    await page.getByRole('cell', { name: 'ann@example.com', exact: true }).waitFor();
    await expectAccessible(page, 'users');
    await page.getByLabel('Search users').fill('bob');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.locator('table.grid tbody tr').count()).toBe(1);
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByText('User disabled, sessions revoked').waitFor();
    await page.getByRole('cell', { name: 'disabled' }).waitFor();
    const login = await rig.env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email: 'bob@example.com', password: 'correct horse 1' } });
    expect(login.statusCode).toBe(403);
    await page.getByRole('button', { name: 'Sessions' }).click();
    await page.getByText('No live sessions').waitFor();
    await expectAccessible(page, 'user sessions');
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete user' }).click();
    await page.getByText('No user matches').waitFor();
    await shot(page, 'users');
  });

  it('files: uploads an image, shows its thumbnail, previews it, makes it private, deletes it', async () => {
    // A valid 8 × 8 PNG (the transformation route refuses damaged images; browsers are lenient).
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEUlEQVQImWMwTjuDFTEMLQkAuYZZQQ0kCIcAAAAASUVORK5CYII=', 'base64');
    const file = path.join(os.tmpdir(), `logo-${process.pid}.png`);
    writeFileSync(file, png);
    await nav('Files').click();
    await page.getByText('No files yet').waitFor();
    await page.getByLabel('Upload a file').setInputFiles(file);
    await page.getByText(`logo-${process.pid}.png uploaded`).waitFor();
    await page.getByRole('cell', { name: `logo-${process.pid}.png`, exact: true }).waitFor();
    await expectAccessible(page, 'files');
    await shot(page, 'files', { doc: true });
    // The thumbnail comes from the image transformation route (an 8 px image is never enlarged).
    const thumb = page.locator('img.thumb');
    await expect.poll(() => thumb.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(8);
    await page.getByRole('button', { name: 'Preview' }).click();
    const img = page.getByRole('img', { name: `Preview of logo-${process.pid}.png` });
    await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(8);
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    // Private: still previewed and thumbnailed, now through signed URLs.
    await page.getByLabel(`logo-${process.pid}.png is private`).check();
    await page.getByText(`logo-${process.pid}.png is now private`).waitFor();
    await expect.poll(() => page.locator('img.thumb').getAttribute('src')).toContain('sig=');
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(8);
    expect(await img.getAttribute('src')).toContain('sig=');
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete file' }).click();
    await page.getByText('No files yet').waitFor();
  });

  it('mail: a template with a live preview, the dev outbox and the logs', async () => {
    await call('POST', '/api/mail/send', p.sk, { to: 'ann@example.com', subject: 'Welcome aboard', text: 'Hello Ann' });
    await drainJobs(rig.env);
    await nav('Mail').click();
    await page.getByRole('heading', { name: 'Own Resend account' }).waitFor();
    await expectAccessible(page, 'mail settings');
    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Greeting');
    await page.getByLabel('Subject').fill('Hi {{ name }}');
    await page.getByText('Subject: Hi Ann').waitFor();
    const frame = page.frameLocator('iframe[title="HTML preview"]');
    await expect.poll(() => frame.locator('p').textContent()).toBe('Hello Ann');
    await expectAccessible(page, 'mail template');
    await shot(page, 'mail-template', { doc: true });
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByRole('cell', { name: 'Greeting', exact: true }).waitFor();
    await page.getByRole('link', { name: 'Dev outbox' }).click();
    await page.getByText('Welcome aboard').waitFor();
    await expectAccessible(page, 'mail outbox');
    await page.getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('cell', { name: 'Welcome aboard' }).waitFor();
    await expectAccessible(page, 'mail logs');
    await page.getByRole('link', { name: 'Audiences' }).click();
    await page.getByText(/Audiences require/).waitFor(); // the error state: no own Resend key
  });

  it('AI: the query builder opens its filter in the records browser', async () => {
    await call('POST', `/api/projects/${p.id}/collections`, op.auth, { name: 'books', schema: [{ key: 'title', type: 'String' }, { key: 'price', type: 'Number' }] });
    await call('POST', `/api/projects/${p.id}/data/books/bulk`, op.auth, [{ title: 'Cheap', price: 5 }, { title: 'Dear', price: 50 }]);
    await page.reload();
    await nav('AI').click();
    await page.getByRole('heading', { name: 'Query builder' }).waitFor();
    await expectAccessible(page, 'AI');
    groq.enqueue({ content: JSON.stringify({ filters: [{ field: 'price', op: 'lt', value: 20 }], sort: [], limit: 20, explanation: 'Books under 20.' }) });
    await page.getByLabel('Collection').selectOption('books');
    await page.getByLabel('What to list, in plain language').fill('books under 20');
    await page.getByRole('button', { name: 'Build the query' }).click();
    await page.getByText('Books under 20.').waitFor();
    await page.getByRole('button', { name: 'Open in the records browser' }).click();
    await expect.poll(() => page.url()).toContain('price_lt=20');
    await expect.poll(() => page.locator('table.grid tbody tr').count()).toBe(1);
    expect(await page.locator('table.grid tbody').textContent()).toContain('Cheap');
  });

  it('usage, account and admin', async () => {
    await nav('Usage').click();
    await page.getByRole('img', { name: 'Usage against plan limits' }).waitFor();
    await expectAccessible(page, 'usage');
    await shot(page, 'usage', { doc: true });
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Change password' }).waitFor();
    await expectAccessible(page, 'account');
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('cell', { name: 'other@example.com', exact: true }).waitFor();
    await expectAccessible(page, 'admin');
    await page.getByLabel('Plan of other@example.com').selectOption('pro');
    await page.getByText('other@example.com is now on pro').waitFor();
    const row = await rig.env.ctx.db.admin.selectFrom('operators').select('plan').where('id', '=', other.id).executeTakeFirstOrThrow();
    expect(row.plan).toBe('pro');
    await shot(page, 'admin');
    expect(problems.errors).toEqual([]);
  });
});
