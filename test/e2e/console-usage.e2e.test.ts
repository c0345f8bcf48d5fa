/**
 * Usage over time in the console (issue 50), in Chromium: an app's requests over HTTP and the
 * sampled bytes show up as uPlot charts on the Usage screen; each chart's table view toggles
 * (and carries the numbers); the plan's limit is drawn on the database, files and mail charts,
 * not on the others; the alert settings save, showing the webhook secret once; axe finds no
 * serious violation in both themes, with charts and with tables; no horizontal scroll at 390 px.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/paths.js';
import { sampleUsage } from '../../src/modules/usage/sample.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { browserGate, expectAccessible, expectNoHorizontalScroll, openPage, shot, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-usage.e2e.test.ts');
let rig: Rig;
let op: TestOperator;
let p: TestProject;
let page: Page;
let problems: { errors: string[] };

const figure = (title: string) => page.locator('figure.usage-chart', { has: page.locator('figcaption', { hasText: title }) });

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  op = await makeOperator(rig.env.ctx, { email: 'usage@example.com' });
  p = await makeProject(rig.env.ctx, op, 'Metered');
  const res = await rig.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: op.auth, payload: { name: 'posts', schema: [{ key: 'title', type: 'String', required: true }] } });
  expect(res.statusCode, res.body).toBe(201);
  // App traffic over HTTP: 7 successes and 3 client errors.
  for (let i = 0; i < 7; i++) expect((await fetch(`${rig.base}/api/data/posts`, { headers: p.sk })).status).toBe(200);
  for (let i = 0; i < 3; i++) expect((await fetch(`${rig.base}/api/data/posts/64b7f0c2a1b2c3d4e5f60718`, { headers: p.sk })).status).toBe(404);
  await rig.env.ctx.db.admin.insertInto('usage_counters').values({ subject_id: p.id, metric: 'db_bytes', period: '', used: 3 * 1024 * 1024 }).execute();
  await sampleUsage(rig.env.ctx);
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => rig?.close());

describe.skipIf(!run)('console: usage over time', { timeout: 120_000 }, () => {
  it('draws the charts with data and the plan limit; each has a table view', async () => {
    await page.goto(`/_/#/p/${p.id}/usage`);
    await page.getByRole('heading', { name: 'Over time' }).waitFor();
    const requests = figure('Requests per hour');
    await requests.locator('canvas').waitFor();
    expect(await page.locator('figure.usage-chart').count()).toBe(6);
    // uPlot's legend shows the hovered (or last) values; the canvas has pixels drawn.
    expect(await requests.locator('.u-legend').textContent()).toContain('2xx');
    const drawn = await requests.locator('canvas').evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i]! > 0) n++;
      return n;
    });
    expect(drawn).toBeGreaterThan(500);

    // The plan's limit: drawn on the database, files and mail charts only.
    const db = figure('Database size');
    expect(await db.getAttribute('data-limit')).toBe(String(50 * 1024 * 1024));
    expect(await db.locator('.u-legend').textContent()).toContain('Plan limit');
    expect(await figure('File storage').getAttribute('data-limit')).toBe(String(20 * 1024 * 1024));
    expect(await figure('Mail this month').locator('.u-legend').textContent()).toContain('Plan limit');
    expect(await requests.getAttribute('data-limit')).toBeNull();
    expect(await requests.locator('.u-legend').textContent()).not.toContain('Plan limit');
    await expectAccessible(page, 'usage with charts (light)');
    await shot(page, 'usage-history');
    // The docs' picture of the charts themselves (docs/dashboard.md "Usage history").
    if (process.env.PLINTH_DOC_SCREENSHOTS === '1') await page.locator('.usage-charts').screenshot({ path: path.join(ROOT_DIR, 'docs', 'images', 'console-usage-history.png') });

    // The table view: the same numbers, then back to the chart.
    const toggle = requests.getByRole('button', { name: /Show table/ });
    await toggle.click();
    const table = requests.getByRole('table');
    await table.waitFor();
    expect(await requests.locator('canvas').count()).toBe(0);
    expect(await requests.getByRole('button', { name: /Show chart/ }).getAttribute('aria-pressed')).toBe('true');
    const heads = await table.locator('thead th').allTextContents();
    expect(heads).toEqual(['Hour', '2xx', '4xx', '5xx']);
    const last = await table.locator('tbody tr').last().locator('td').allTextContents();
    expect(last).toEqual(['7', '3', '0']);
    await db.getByRole('button', { name: /Show table/ }).click();
    expect(await db.locator('thead th').allTextContents()).toEqual(['Hour', 'Data', 'Plan limit']);
    expect(await db.locator('tbody tr').last().locator('td').allTextContents()).toEqual(['3.0 MB', '50 MB']);
    await expectAccessible(page, 'usage with tables (light)');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'usage with tables (dark)');
    await requests.getByRole('button', { name: /Show chart/ }).click();
    await requests.locator('canvas').waitFor();
    await expectAccessible(page, 'usage with charts (dark)');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(problems.errors).toEqual([]);
  });

  it('saves the alert settings and shows the webhook secret once', async () => {
    await page.goto(`/_/#/p/${p.id}/usage`);
    await page.getByRole('heading', { name: 'Alerts', exact: true }).waitFor();
    await page.getByLabel('Error rate threshold (%)').fill('5');
    await page.getByLabel('Webhook URL').fill('http://127.0.0.1:9/alerts');
    await page.getByRole('button', { name: 'Save alert settings' }).click();
    const secret = page.getByRole('group', { name: 'Alert webhook signing secret' });
    await secret.waitFor();
    expect(await secret.locator('code').textContent()).toMatch(/^whsec_/);
    const stored = await rig.env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/usage/alerts`, headers: op.auth });
    expect(stored.json().data).toMatchObject({ errorRatePercent: 5, webhookUrl: 'http://127.0.0.1:9/alerts', enabled: true });
    await expectAccessible(page, 'usage alerts');
    expect(problems.errors).toEqual([]);
  });

  it('at 390 px: no horizontal scroll', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      await page.goto(`/_/#/p/${p.id}/usage`);
      await page.reload();
      await figure('Requests per hour').locator('canvas').waitFor();
      await expectNoHorizontalScroll(page, 'usage');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
