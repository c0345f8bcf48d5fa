/**
 * The Backups screen in Chromium (issue 50, item 1): the schedule form saves a custom cron, "Back
 * up now" shows a progress bar until the workers stored it, the list shows size and counts; the
 * restore dialog names what it replaces and keeps its button disabled until the project's name
 * is typed; the restore runs with a progress bar; a backup is deleted after a confirmation naming
 * it; axe finds no serious violation.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { drainJobs } from '../helpers/jobs.js';
import { browserGate, expectAccessible, openPage, shot, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-backups.e2e.test.ts');
let rig: Rig;
let op: TestOperator;
let p: TestProject;
let page: Page;
let problems: { errors: string[] };

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  op = await makeOperator(rig.env.ctx, { email: 'backups@example.com', plan: 'pro' });
  p = await makeProject(rig.env.ctx, op, 'Backed');
  const res = await rig.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: op.auth, payload: { name: 'posts', schema: [{ key: 'title', type: 'String' }] } });
  expect(res.statusCode, res.body).toBe(201);
  for (let i = 0; i < 5; i++) await rig.env.app.inject({ method: 'POST', url: '/api/data/posts', headers: p.sk, payload: { title: `post ${i}` } });
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => rig?.close());

describe.skipIf(!run)('console: backups', { timeout: 120_000 }, () => {
  it('schedules, backs up with a progress bar, lists, and restores after the typed confirmation', async () => {
    await page.goto(`/_/#/p/${p.id}/backups`);
    await page.getByRole('heading', { name: 'Backups', level: 1 }).waitFor();
    await page.getByText('No backups yet').waitFor();
    await page.getByLabel('Frequency').selectOption('custom');
    await page.getByLabel('Cron expression (UTC)').fill('15 3 * * 1');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.getByText('Runs at').getByText('15 3 * * 1').waitFor();

    await page.getByRole('button', { name: 'Back up now' }).click();
    // queued: the progress bar shows until the workers run it
    await page.getByRole('progressbar', { name: /Backup: queued/ }).waitFor();
    await expectAccessible(page, 'backups with progress');
    await drainJobs(rig.env);
    const row = page.locator('tbody tr', { hasText: 'Stored' });
    await row.waitFor({ timeout: 10_000 });
    expect(await row.locator('td').nth(3).textContent()).toBe('5');
    await expect.poll(() => page.getByRole('progressbar').count(), { timeout: 5000 }).toBe(0);
    await expectAccessible(page, 'backups (light)');
    await shot(page, 'backups');

    await row.getByRole('button', { name: /Restore the backup/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Restore into').selectOption('same');
    await dialog.getByText(/This replaces everything in “Backed”: 1 collections, 5 documents/).waitFor();
    const restore = dialog.getByRole('button', { name: 'Restore' });
    expect(await restore.isDisabled()).toBe(true);
    await dialog.getByLabel('Type “Backed” to confirm').fill('Backe');
    expect(await restore.isDisabled()).toBe(true);
    await dialog.getByLabel('Type “Backed” to confirm').fill('Backed');
    await expectAccessible(page, 'restore dialog');
    await restore.click();
    await page.getByRole('progressbar', { name: /Restore: queued/ }).waitFor();
    await drainJobs(rig.env);
    await expect.poll(() => page.getByRole('progressbar').count(), { timeout: 5000 }).toBe(0);
    const ops = await rig.env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/operations`, headers: op.auth });
    expect(ops.json().data[0]).toMatchObject({ kind: 'restore', status: 'succeeded', percent: 100 });

    // delete: the confirmation names the backup; the row leaves the list
    await row.getByRole('button', { name: /Delete the backup/ }).click();
    const confirm = page.getByRole('dialog');
    await confirm.getByText(/Delete the manual backup of .+\? Its stored copy is removed from this server/).waitFor();
    await expectAccessible(page, 'delete backup confirmation');
    await confirm.getByRole('button', { name: 'Delete backup' }).click();
    await page.getByText('No backups yet').waitFor();

    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'backups (dark)');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(problems.errors).toEqual([]);
  });
});
