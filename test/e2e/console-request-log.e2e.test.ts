/**
 * The request log in the console (issue 39), in Chromium: an app's failing requests, made over
 * HTTP with the project's key, appear on the project's Logs screen with their status, routed
 * route and error code (never the key or the URL's query); the status and route filters; axe
 * finds no serious violation in the light and dark themes; no horizontal scroll at 390 px.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { browserGate, expectAccessible, expectNoHorizontalScroll, openPage, shot, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-request-log.e2e.test.ts');
let rig: Rig;
let op: TestOperator;
let p: TestProject;
let page: Page;
let problems: { errors: string[] };

const MISSING_ID = '64b7f0c2a1b2c3d4e5f60718';

/** An app's request, over HTTP like a browser or server would make it. */
async function appRequest(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${rig.base}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as { code?: string } };
}

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  op = await makeOperator(rig.env.ctx, { email: 'logs@example.com' });
  p = await makeProject(rig.env.ctx, op, 'Logs');
  const res = await rig.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: op.auth, payload: { name: 'posts', schema: [{ key: 'title', type: 'String', required: true }] } });
  expect(res.statusCode, res.body).toBe(201);
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => rig?.close());

describe.skipIf(!run)('console: request log', { timeout: 120_000 }, () => {
  it('shows a failing request with its error code; filters by status and route', async () => {
    const ok = await appRequest('POST', '/api/data/posts', p.sk, { title: 'Hello' });
    expect(ok.status).toBeLessThan(300);
    // The SDK's way for browsers: the publishable key in the query string. Never logged.
    const missing = await appRequest('GET', `/api/data/posts/${MISSING_ID}?key=${p.publishableKey}`, {});
    expect(missing).toMatchObject({ status: 404, body: { code: 'document_not_found' } });
    const invalid = await appRequest('POST', '/api/data/posts', p.sk, { title: 5 });
    expect(invalid.status).toBe(400);

    await page.goto(`/_/#/p/${p.id}/logs`);
    await page.getByRole('heading', { name: 'Request log', level: 1 }).waitFor();
    const table = page.locator('table.reqlog');
    const row = table.locator('tbody tr', { hasText: 'document_not_found' });
    await row.waitFor();
    expect(await row.textContent()).toContain('/api/data/:collectionName/:id');
    expect(await row.textContent()).toContain('404');
    await table.locator('tbody tr', { hasText: invalid.body.code! }).first().waitFor();
    const text = (await table.textContent())!;
    for (const needle of [p.publishableKey, p.secretKey, MISSING_ID, '?key=']) expect(text).not.toContain(needle);
    await expectAccessible(page, 'logs (light)');
    await shot(page, 'logs', { doc: true });

    // Errors only: the success goes, both failures stay.
    await page.getByLabel('Status').selectOption('errors');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    expect(await table.locator('tbody .status-ok').count()).toBe(0);
    // One route: the 404's.
    await page.getByLabel('Route').selectOption('/api/data/:collectionName/:id');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    await table.locator('tbody tr', { hasText: 'document_not_found' }).waitFor();

    // A new failure shows up on Refresh.
    await appRequest('GET', '/api/data/posts/64b7f0c2a1b2c3d4e5f60719', p.pk);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);

    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'logs (dark)');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(problems.errors).toEqual([]);
  });

  it('at 390 px: no horizontal scroll, each request readable', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      await page.goto(`/_/#/p/${p.id}/logs`);
      await page.reload();
      const row = page.locator('table.reqlog tbody tr', { hasText: 'document_not_found' }).first();
      await row.waitFor();
      await expectNoHorizontalScroll(page, 'logs');
      expect(await row.isVisible()).toBe(true);
      await expectAccessible(page, 'logs at 390 px');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
