/**
 * The Functions screen in Chromium (docs/functions.md, "The console"): an HTTP function created
 * in the screen, its source changed in the editor and deployed (version 2), run with a body (the
 * value, the log line, duration and CPU), seen in the live log, rolled back to version 1, a
 * secret set (its value never shown back, nor sent by any route); at 390 px no sideways page
 * scroll, and axe clean.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { browserGate, expectAccessible, expectNoHorizontalScroll, openPage, shot, signIn, startRig, type PageProblems, type Rig } from './harness.js';

const run = browserGate('console-functions.e2e.test.ts');
let rig: Rig;
let op: TestOperator;
let p: TestProject;
let page: Page;
let problems: PageProblems;

const SECRET_VALUE = 'sk_live_do-not-show-me-42';

async function api(method: string, url: string, body?: unknown) {
  const res = await rig.env.app.inject({ method: method as 'GET', url, headers: op.auth, ...(body !== undefined ? { payload: body as object } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

/** A step that must not hang the test (a busy page answers nothing). */

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  op = await makeOperator(rig.env.ctx);
  p = await makeProject(rig.env.ctx, op, 'Shop');
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => {
  await rig?.close();
});

describe.skipIf(!run)('console: functions', { timeout: 180_000 }, () => {
  it('creates an HTTP function, deploys, runs it with a body, sees the log, rolls back', async () => {
    await page.goto(`/_/#/p/${p.id}/functions`);
    await page.getByRole('heading', { name: 'Functions', exact: true }).waitFor();
    await page.getByText('No function yet').waitFor();
    await page.getByRole('button', { name: 'New function' }).click();
    const dialog = page.getByRole('dialog', { name: 'New function' });
    await dialog.getByLabel('Name').fill('greet');
    await dialog.getByLabel('Kind').selectOption('schedule');
    await dialog.getByLabel('Cron expression').waitFor();
    await dialog.getByLabel('Kind').selectOption('before');
    await dialog.getByText('Events (none ticked: all)').waitFor();
    await dialog.getByLabel('Kind').selectOption('http');
    await dialog.getByLabel('Language').selectOption('js');
    await expectAccessible(page, 'new function dialog');
    await dialog.getByRole('button', { name: 'Create function' }).click();

    await page.getByRole('heading', { name: 'Function greet' }).waitFor();
    const editor = page.getByLabel('Source of greet', { exact: true });
    await editor.waitFor();
    expect(await editor.inputValue()).toContain('plinth.data.collection(name)');

    // Deploy: the same source as TypeScript is a new version.
    const source = page.getByRole('region', { name: 'Source' });
    await source.getByLabel('Language').selectOption('ts');
    await source.getByText('Not deployed yet').waitFor();
    await source.getByRole('button', { name: 'Deploy' }).click();
    await page.getByText('v2 of 2').waitFor();
    const fn = await api('GET', `/api/projects/${p.id}/functions/greet`);
    expect(fn).toMatchObject({ version: 2, versions: 2, language: 'ts' });

    const runPanel = page.getByRole('region', { name: 'Run with this body' });
    await runPanel.getByLabel('Event (JSON)', { exact: true }).waitFor();
    await runPanel.getByRole('button', { name: 'Run', exact: true }).click();
    const result = runPanel.getByRole('status', { name: 'Run result' });
    await result.waitFor();
    expect(JSON.parse((await result.getByLabel('Returned value').textContent())!)).toEqual({ hello: 'Ada' });
    expect(await result.textContent()).toContain('called with {"name":"Ada"}');
    expect(await result.textContent()).toMatch(/ms wall · [\d.]+ ms CPU/);

    // The live log picks the run up by itself (it polls).
    const log = page.getByRole('list', { name: 'Invocations' });
    await log.waitFor({ timeout: 15_000 });
    await expect.poll(async () => log.textContent(), { timeout: 15_000 }).toContain('called with {"name":"Ada"}');
    expect(await log.textContent()).toMatch(/log\s*called with/);
    await expectAccessible(page, 'function page');
    await shot(page, 'functions-editor', { doc: true });

    await page.getByRole('button', { name: 'Roll back to version 1' }).click();
    await page.getByText('v1 of 2').waitFor();
    expect(await api('GET', `/api/projects/${p.id}/functions/greet`)).toMatchObject({ version: 1, language: 'js' });

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    expect((await api('GET', `/api/projects/${p.id}/functions/greet`)).enabled).toBe(false);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();

    // The list: kind, trigger, version, state and the day's numbers.
    await page.getByRole('link', { name: '← All functions' }).click();
    const table = page.getByRole('table');
    await table.waitFor();
    const row = table.getByRole('row', { name: /greet/ });
    await expect.poll(async () => row.textContent()).toMatch(/greet\s*http\s*HTTP\s*v1 of 2\s*enabled\s*1\s*0\s*[\d.]+ ms\s*[\d.]+ ms/);
    expect(problems.errors.join('\n')).toBe('');
  });

  it('typing code with Enter and Tab in the editor, then Revert', async () => {
    await page.goto(`/_/#/p/${p.id}/functions/greet`);
    const editor = page.getByLabel('Source of greet', { exact: true });
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('// ünï 日本');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.type('const x = 1;');
    expect(await editor.inputValue()).toMatch(/\/\/ ünï 日本\n {2}const x = 1;$/);
    const source = page.getByRole('region', { name: 'Source' });
    await source.getByText('Not deployed yet').waitFor();
    await source.getByRole('button', { name: 'Revert' }).click();
    await source.getByText('Not deployed yet').waitFor({ state: 'detached' });
    const body = page.getByLabel('Event (JSON)', { exact: true });
    await body.click();
    await page.keyboard.press('Enter');
    expect(await body.inputValue()).toContain('\n');
  });

  it('sets a secret that is never shown back, deletes it', async () => {
    await page.goto(`/_/#/p/${p.id}/functions`);
    const form = page.getByRole('form', { name: 'Set a secret' });
    await form.getByLabel('Secret name').fill('STRIPE_KEY');
    await form.getByLabel('Value').fill(SECRET_VALUE);
    expect(await form.getByLabel('Value').getAttribute('type')).toBe('password');
    await form.getByRole('button', { name: 'Set secret' }).click();
    const names = page.getByRole('list', { name: 'Secret names' });
    await names.waitFor();
    expect(await names.textContent()).toContain('STRIPE_KEY');
    expect(await form.getByLabel('Value').inputValue()).toBe('');
    expect(await page.content()).not.toContain(SECRET_VALUE);
    expect(JSON.stringify(await api('GET', `/api/projects/${p.id}/function-secrets`))).not.toContain(SECRET_VALUE);
    await expectAccessible(page, 'functions list with secrets');

    await page.getByRole('button', { name: 'Delete STRIPE_KEY' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete secret' }).click();
    await page.getByText('No secret yet.').waitFor();
    expect(await api('GET', `/api/projects/${p.id}/function-secrets`)).toEqual([]);
  });

  it('at 390 px: no sideways page scroll on the list and the function page; axe clean', async () => {
    const { page: narrow } = await openPage(rig, { width: 390, height: 844 });
    await signIn(narrow, op.email, op.password);
    await narrow.goto(`/_/#/p/${p.id}/functions`);
    await narrow.getByRole('table').waitFor();
    await expectNoHorizontalScroll(narrow, 'functions list');
    await expectAccessible(narrow, 'functions list at 390 px');
    await narrow.goto(`/_/#/p/${p.id}/functions/greet`);
    await narrow.getByLabel('Source of greet', { exact: true }).waitFor();
    await narrow.getByRole('list', { name: 'Invocations' }).waitFor();
    await expectNoHorizontalScroll(narrow, 'function page');
    await expectAccessible(narrow, 'function page at 390 px');
    await shot(narrow, 'functions-narrow');

    await narrow.getByRole('button', { name: 'Delete' }).first().click();
    const confirm = narrow.getByRole('dialog', { name: 'Delete greet?' });
    await confirm.getByLabel('Type “greet” to confirm').fill('greet');
    await confirm.getByRole('button', { name: 'Delete function' }).click();
    await narrow.getByText('No function yet').waitFor();
    expect(await api('GET', `/api/projects/${p.id}/functions`)).toEqual([]);
    await narrow.context().close();
  });
});
