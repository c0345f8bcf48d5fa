/**
 * Every console screen at 390 px (a phone) with realistic content: no horizontal scroll. The
 * project has a collection with many fields and long names (and a long project name), so the
 * lists, the schema editor and the records grid hold what a real project holds. Issue 46 item
 * 8: the Collections screen was ~210 px wider than the window.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOperator, makeProject, USERS_FIELDS, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { browserGate, expectNoHorizontalScroll, openPage, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-narrow.e2e.test.ts');
let rig: Rig;
let op: TestOperator;
let p: TestProject;
let page: Page;

const LONG = 'customer_subscription_invoice_line_items_archive';
const FIELDS = [
  { key: 'title', type: 'String', required: true },
  { key: 'a_rather_long_field_name_for_the_billing_address_line', type: 'String' },
  { key: 'amount_in_smallest_currency_unit', type: 'Number' },
  { key: 'is_subscription_renewal_automatic', type: 'Boolean' },
  { key: 'scheduled_for_processing_at', type: 'Date' },
  { key: 'tags', type: 'Array', items: { type: 'String' } },
  { key: 'shipping_address', type: 'Object', fields: [{ key: 'street_and_house_number', type: 'String' }, { key: 'city', type: 'String' }, { key: 'postal_code', type: 'String' }] },
  { key: 'owner', type: 'Ref', ref: 'authors' },
  ...Array.from({ length: 12 }, (_, i) => ({ key: `additional_metadata_property_number_${i + 1}`, type: 'String' })),
];

async function call(method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const res = await rig.env.app.inject({ method: method as 'GET', url, headers, ...(body !== undefined ? { payload: body as object } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

beforeAll(async () => {
  if (!run) return;
  rig = await startRig({ ADMIN_EMAIL: 'admin-with-a-long-address@example.com' });
  op = await makeOperator(rig.env.ctx, { email: 'admin-with-a-long-address@example.com' });
  p = await makeProject(rig.env.ctx, op, 'A project with a rather long name for a small screen');
  await call('POST', `/api/projects/${p.id}/collections`, op.auth, { name: 'users', schema: USERS_FIELDS });
  await call('POST', `/api/projects/${p.id}/collections`, op.auth, { name: 'authors', schema: [{ key: 'name', type: 'String' }] });
  await call('POST', `/api/projects/${p.id}/collections`, op.auth, { name: LONG, schema: FIELDS, indexes: [{ fields: ['title', 'amount_in_smallest_currency_unit'] }] });
  for (let i = 0; i < 3; i++) {
    await call('POST', `/api/data/${LONG}`, p.sk, {
      title: `An invoice line with a long title that goes on for a while, number ${i}`,
      a_rather_long_field_name_for_the_billing_address_line: '1600 Amphitheatre Parkway, Mountain View, CA 94043, United States of America',
      amount_in_smallest_currency_unit: 123456789,
      tags: ['alpha', 'beta'],
    });
  }
  await call('POST', '/api/userAuth/signup', p.pk, { email: 'someone-with-a-very-long-address@subdomain.example.com', password: 'correct horse 1' });
  ({ page } = await openPage(rig, { width: 390, height: 800 }));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => {
  await rig?.close();
});

/** The screens at `hash`, once `ready` shows, are no wider than the window; names every one that is. */
async function check(screens: Array<[hash: string, ready: (page: Page) => Promise<unknown>, name: string]>) {
  const failures: string[] = [];
  for (const [hash, ready, name] of screens) {
    await page.goto(`/_/#/${hash}`);
    await ready(page);
    await expectNoHorizontalScroll(page, name).catch((e: Error) => failures.push(e.message.split('\n')[0]!));
  }
  expect(failures).toEqual([]);
}
const heading = (name: string) => (pg: Page) => pg.getByRole('heading', { name, exact: true }).first().waitFor();

const settled = (title: string) => async (pg: Page) => {
  await heading(title)(pg);
  await pg.locator('.spinner').first().waitFor({ state: 'detached' });
};

describe.skipIf(!run)('console at 390 px', { timeout: 120_000 }, () => {
  it('collections: the list, a new collection, and a collection with many long-named fields', async () => {
    await check([
      [`p/${p.id}/collections`, (pg) => pg.getByRole('main').getByRole('link', { name: LONG }).waitFor(), 'collections'],
      [`p/${p.id}/collections/_new`, heading('New collection'), 'new collection'],
      [`p/${p.id}/collections/${LONG}`, (pg) => pg.getByText('Schema version 1.').waitFor(), 'collection schema'],
    ]);
  });

  it('records, with long values', async () => {
    await check([[`p/${p.id}/data/${LONG}`, (pg) => pg.getByRole('cell', { name: /number 0/ }).first().waitFor(), 'records']]);
  });

  it('every other project section', async () => {
    const sections: Array<[string, string]> = [
      ['users', 'Users'],
      ['files', 'Files'],
      ['mail', 'Mail'],
      ['mail/templates', 'Mail'],
      ['mail/auth-mails', 'Mail'],
      ['mail/logs', 'Mail'],
      ['mail/outbox', 'Mail'],
      ['webhooks', 'Webhooks'],
      ['logs', 'Request log'],
      ['audit', 'Audit log'],
      ['ai', 'AI'],
      ['usage', 'Usage'],
      ['settings', 'Settings'],
    ];
    await check(sections.map(([section, title]) => [`p/${p.id}/${section}`, settled(title), section]));
  });

  it('projects, account and admin', async () => {
    await check([
      ['projects', (pg) => pg.getByRole('link', { name: /rather long name/ }).first().waitFor(), 'projects'],
      ['account', settled('Account'), 'account'],
      ['admin', settled('Admin'), 'admin'],
    ]);
  });
});
