/**
 * The audit log in the console (issue 49, item 4), in Chromium: changes made in the project
 * (a setting, a key rotation, a collection) appear on the Audit screen with who and what, the
 * before/after opens, the action filter narrows the list; "Verify chain" says the chain is
 * intact, and names the broken entry after a row is edited directly in SQL; the export link
 * carries the filters; axe finds no serious violation in the light and dark themes; no
 * horizontal scroll at 390 px.
 */
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { browserGate, expectAccessible, expectNoHorizontalScroll, openPage, shot, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-audit.e2e.test.ts');
let rig: Rig;
let op: TestOperator;
let p: TestProject;
let page: Page;
let problems: { errors: string[] };

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  op = await makeOperator(rig.env.ctx, { email: 'audit@example.com' });
  p = await makeProject(rig.env.ctx, op, 'Audited');
  const change = async (method: 'POST' | 'PATCH', url: string, payload: object) => {
    const res = await rig.env.app.inject({ method, url: `/api/projects/${p.id}${url}`, headers: op.auth, payload });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  await change('PATCH', '', { name: 'Audited project' });
  await change('POST', '/api-key', { keyType: 'secret' });
  await change('POST', '/collections', { name: 'posts', schema: [{ key: 'title', type: 'String' }] });
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => rig?.close());

describe.skipIf(!run)('console: audit log', { timeout: 120_000 }, () => {
  it('lists the changes with who and what, filters by action, verifies the chain and finds a row edited in SQL', async () => {
    await page.goto(`/_/#/p/${p.id}/audit`);
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    const table = page.locator('table.audit');
    await table.locator('tbody tr', { hasText: 'schema.create' }).waitFor();
    expect(await table.locator('tbody tr').count()).toBe(3);
    const settings = table.locator('tbody tr', { hasText: 'settings.update' });
    expect(await settings.textContent()).toContain('audit@example.com');
    await settings.getByText('Before and after').click();
    expect(await settings.locator('pre').first().textContent()).toContain('"name": "Audited"');
    expect(await settings.locator('pre').nth(1).textContent()).toContain('"name": "Audited project"');
    expect((await table.textContent())!).not.toContain(p.secretKey);
    await expectAccessible(page, 'audit (light)');
    await shot(page, 'audit');

    await page.getByLabel('Action').fill('keys.*');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    await table.locator('tbody tr', { hasText: 'keys.rotate' }).waitFor();
    expect(await page.getByRole('link', { name: 'Export NDJSON' }).getAttribute('href')).toContain('action=keys.*');

    await page.getByRole('button', { name: 'Verify chain' }).click();
    await page.getByRole('status').getByText('The chain is intact: 3 entries checked').waitFor();

    const sql = new pg.Client({ connectionString: rig.env.databaseUrl });
    await sql.connect();
    try {
      await sql.query("SET session_replication_role = 'replica'");
      await sql.query(`UPDATE audit_entries SET ip = '198.51.100.1' WHERE project_id = $1 AND seq = 2`, [p.id]);
    } finally {
      await sql.end();
    }
    await page.getByRole('button', { name: 'Verify chain' }).click();
    await page.getByRole('status').getByText(/The chain is broken at entry 2/).waitFor();

    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'audit (dark)');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(problems.errors).toEqual([]);
  });

  it('at 390 px: no horizontal scroll, each entry readable', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      await page.goto(`/_/#/p/${p.id}/audit`);
      await page.reload();
      const row = page.locator('table.audit tbody tr', { hasText: 'schema.create' }).first();
      await row.waitFor();
      await expectNoHorizontalScroll(page, 'audit');
      expect(await row.isVisible()).toBe(true);
      await expectAccessible(page, 'audit at 390 px');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
