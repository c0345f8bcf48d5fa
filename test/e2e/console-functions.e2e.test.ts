/**
 * The Functions screen in Chromium (docs/functions.md, "The console"): an HTTP function created
 * in the screen, typed in the CodeMirror editor (Enter, Tab, Shift-Tab, completions for
 * `plinth.`, `plinth.data.`, the project's collection names inside `collection('…')`, a
 * collection's methods and `plinth.caller.`; Escape then Tab leaves the editor), deployed
 * (version 2), run with a body typed in the event's JSON editor (the value, the log line,
 * duration and CPU), seen in the live log, rolled back to version 1; fast typing with Enter in
 * both editors never hangs the page (each step within a bounded wait); a secret set (its value
 * never shown back, its name completed after `plinth.env.`); axe clean in the light and dark
 * themes, with the completion list open too; at 390 px no sideways page scroll.
 */
import type { Locator, Page } from 'playwright-core';
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

/**
 * A step that must not hang the test: a page whose main thread is stuck answers nothing, and
 * Playwright would wait for the whole test timeout. Fails within `ms` instead.
 */
async function bounded<T>(p: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms (the page hangs)`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
/** The page still runs script: a round trip through its main thread. */
const answers = (what: string, pg: Page = page) => bounded(pg.evaluate(() => document.title), `the page after ${what}`, 5_000);

/** An editor's text as the user sees it: its lines (CodeMirror draws each line as a .cm-line). */
const textOf = (editor: Locator) => bounded(editor.evaluate((el) => [...el.querySelectorAll('.cm-line')].map((l) => l.textContent).join('\n')), 'reading the editor');
/** The completion list's option labels (each option: its label, then its detail). */
const optionLabels = (pg: Page = page) => bounded(pg.locator('.cm-tooltip-autocomplete [role="option"] .cm-completionLabel').allTextContents(), 'reading the completions');
/** Whether the focus is inside a CodeMirror editor (the editors live in shadow roots: the host has the document's focus). */
const focusInEditor = () => page.evaluate(() => !!document.activeElement?.shadowRoot?.activeElement?.closest('.cm-editor'));

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  op = await makeOperator(rig.env.ctx);
  p = await makeProject(rig.env.ctx, op, 'Shop');
  await api('POST', `/api/projects/${p.id}/collections`, { name: 'posts', schema: [{ key: 'title', type: 'String' }] });
  await api('POST', `/api/projects/${p.id}/collections`, { name: 'orders', schema: [{ key: 'total', type: 'Number' }] });
  await api('POST', `/api/projects/${p.id}/data/posts/bulk`, [{ title: 'One' }, { title: 'Two' }]);
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => {
  await rig?.close();
});

const TYPED = [
  'export default async (req, plinth) => {',
  "  const n = await plinth.data.collection('posts').count();",
  "  console.log('posts', n);",
  '  return { posts: n, name: req.body.name, caller: plinth.caller.keyKind };',
  '  // tabbed',
  '};',
].join('\n');

describe.skipIf(!run)('console: functions', { timeout: 180_000 }, () => {
  it('creates an HTTP function, types it with Enter, Tab and completions, deploys, runs it with a body, sees the log, rolls back', async () => {
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
    expect(await textOf(editor)).toContain('plinth.data.collection(name)');
    // The editor is a labelled, multi-line text box with its keyboard hint as description.
    expect(await editor.getAttribute('role')).toBe('textbox');
    expect(await editor.getAttribute('aria-multiline')).toBe('true');
    expect(await page.getByText('Esc then Tab leaves the editor').count()).toBe(1);
    // JavaScript is highlighted: the keywords are spans of their own.
    await expect.poll(() => editor.locator('span', { hasText: /^export$/ }).count()).toBeGreaterThan(0); // highlighting may run in idle time

    // Typing a function: all of it replaced.
    await editor.click();
    await page.keyboard.press('Control+a');
    await page.keyboard.press('Backspace');
    expect(await textOf(editor)).toBe('');
    const source = page.getByRole('region', { name: 'Source' });
    await source.getByText('Not deployed yet').waitFor();
    await bounded(page.keyboard.type('export default async (req, plinth) => {'), 'typing');
    await bounded(page.keyboard.press('Enter'), 'Enter');
    // Enter between the braces: a new line indented by two, the closing brace below it.
    expect(await textOf(editor)).toBe('export default async (req, plinth) => {\n  \n}');

    // plinth. offers its members, each with its short doc.
    await bounded(page.keyboard.type('const n = await plinth.'), 'typing');
    const list = page.getByRole('listbox');
    await list.waitFor();
    await expect.poll(async () => (await optionLabels()).sort()).toEqual(['caller', 'data', 'env', 'fetch', 'mail', 'response']);
    await bounded(page.keyboard.type('da'), 'typing');
    await expect.poll(optionLabels).toEqual(['data']);
    await expect.poll(() => page.locator('.cm-completionInfo').textContent()).toContain("The project's collections, as the caller");
    await bounded(page.keyboard.type('ta.'), 'typing');
    await expect.poll(async () => (await optionLabels()).sort()).toEqual(['collection', 'service']);
    // Inside collection('…'): the project's collections.
    await bounded(page.keyboard.type("collection('"), 'typing');
    await expect.poll(async () => (await optionLabels()).sort()).toEqual(expect.arrayContaining(['orders', 'posts']));
    await bounded(page.keyboard.type('po'), 'typing');
    await expect.poll(optionLabels).toEqual(['posts']);
    await bounded(page.keyboard.press('Enter'), 'Enter on a completion');
    expect(await textOf(editor)).toContain("plinth.data.collection('posts')");
    // A collection's methods.
    await page.keyboard.press('End');
    await bounded(page.keyboard.type('.'), 'typing');
    await expect.poll(async () => (await optionLabels()).sort()).toEqual(['count', 'create', 'delete', 'get', 'list', 'restore', 'update']);
    await bounded(page.keyboard.type('count();'), 'typing');
    await bounded(page.keyboard.press('Enter'), 'Enter');
    await bounded(page.keyboard.type("console.log('posts', n);"), 'typing');
    await bounded(page.keyboard.press('Enter'), 'Enter');
    await bounded(page.keyboard.type('return { posts: n, name: req.body.name, caller: plinth.caller.'), 'typing');
    await expect.poll(async () => (await optionLabels()).sort()).toEqual(['claims', 'keyKind', 'userId']);
    await bounded(page.keyboard.type('keyKind };'), 'typing');
    await page.keyboard.press('Escape');
    await bounded(page.keyboard.press('Enter'), 'Enter');
    // Tab indents the line by one more level, Shift-Tab takes it back.
    await bounded(page.keyboard.press('Tab'), 'Tab');
    await bounded(page.keyboard.type('// tabbed'), 'typing');
    expect((await textOf(editor)).split('\n')[4]).toBe('    // tabbed');
    await bounded(page.keyboard.press('Shift+Tab'), 'Shift+Tab');
    expect((await textOf(editor)).split('\n')[4]).toBe('  // tabbed');
    await page.keyboard.press('Control+End');
    await bounded(page.keyboard.type(';'), 'typing');
    expect(await textOf(editor)).toBe(TYPED);
    await answers('typing the function');

    // Search: Ctrl-F opens CodeMirror's search panel, Escape closes it and goes back to the text.
    await page.keyboard.press('Control+f');
    const find = page.getByRole('textbox', { name: 'Find' });
    await find.waitFor();
    await find.fill('posts');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.cm-searchMatch').count()).toBeGreaterThan(1);
    await page.keyboard.press('Escape');
    await find.waitFor({ state: 'detached' });
    await page.keyboard.press('Control+End');

    // Escape then Tab leaves the editor, and that Tab indents nothing.
    expect(await focusInEditor()).toBe(true);
    // (After a person's pause: an Escape while a completion query is still pending, 100 ms
    // after a key, closes that query instead.)
    await page.waitForTimeout(300);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Tab');
    expect(await focusInEditor()).toBe(false);
    expect(await textOf(editor)).toBe(TYPED);

    // Deploy: the typed source as TypeScript is version 2.
    await source.getByLabel('Language').selectOption('ts');
    await source.getByRole('button', { name: 'Deploy' }).click();
    await page.getByText('v2 of 2').waitFor();
    const fn = await api('GET', `/api/projects/${p.id}/functions/greet`);
    expect(fn).toMatchObject({ version: 2, versions: 2, language: 'ts', source: TYPED });
    expect(await textOf(page.getByLabel('Source of greet', { exact: true }))).toBe(TYPED);

    // Run with a body typed in the event's JSON editor, as the service.
    const runPanel = page.getByRole('region', { name: 'Run with this body' });
    const event = runPanel.getByLabel('Event (JSON)', { exact: true });
    await event.click();
    await page.keyboard.press('Control+a');
    await bounded(page.keyboard.type('{\n"method": "POST",\n"body": {"name": "Ada"}\n}'), 'typing the event');
    await runPanel.getByLabel('Acting as').selectOption('service');
    await runPanel.getByRole('button', { name: 'Run', exact: true }).click();
    const result = runPanel.getByRole('status', { name: 'Run result' });
    await result.waitFor();
    expect(JSON.parse((await result.getByLabel('Returned value').textContent())!)).toEqual({ posts: 2, name: 'Ada', caller: 'secret' });
    expect(await result.textContent()).toContain('posts 2');
    expect(await result.textContent()).toMatch(/ms wall · [\d.]+ ms CPU/);

    // The live log picks the run up by itself (it polls).
    const log = page.getByRole('list', { name: 'Invocations' });
    await log.waitFor({ timeout: 15_000 });
    await expect.poll(async () => log.textContent(), { timeout: 15_000 }).toContain('posts 2');
    expect(await log.textContent()).toMatch(/log\s*posts 2/);
    await expectAccessible(page, 'function page');
    await shot(page, 'functions-editor', { doc: true });

    // axe with the completion list open, in the light and the dark theme.
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const ed = page.getByLabel('Source of greet', { exact: true });
      await ed.click();
      await page.keyboard.press('Control+End');
      await bounded(page.keyboard.type('\nplinth.da'), 'typing');
      await list.waitFor();
      await expect.poll(() => page.locator('.cm-completionInfo').textContent()).toContain("The project's collections");
      await expectAccessible(page, `function page with completions (${scheme})`);
      if (scheme === 'dark') await shot(page, 'functions-editor-dark');
      await page.keyboard.press('Escape');
      await list.waitFor({ state: 'detached' });
      await page.getByRole('region', { name: 'Source' }).getByRole('button', { name: 'Revert' }).click();
      await expect.poll(() => textOf(ed)).toBe(TYPED);
    }
    await page.emulateMedia({ colorScheme: 'light' });

    await page.getByRole('button', { name: 'Roll back to version 1' }).click();
    await page.getByText('v1 of 2').waitFor();
    expect(await api('GET', `/api/projects/${p.id}/functions/greet`)).toMatchObject({ version: 1, language: 'js' });
    expect(await textOf(page.getByLabel('Source of greet', { exact: true }))).toContain('plinth.data.collection(name)');

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

  // The bug that kept CodeMirror off this screen: two keys within one frame (Playwright types
  // with no delay) made the editor and its parent swap two texts forever and the page hung.
  it('Enter and fast typing in both editors never hang the page; Revert puts the deployed text back', async () => {
    // A page of its own: a hang here must not take the other tests' page with it.
    const own = await openPage(rig);
    const tab = own.page;
    await signIn(tab, op.email, op.password);
    await tab.goto(`/_/#/p/${p.id}/functions/greet`);
    const editor = tab.getByLabel('Source of greet', { exact: true });
    await editor.click();
    await tab.keyboard.press('Control+End');
    await bounded(tab.keyboard.press('Enter'), 'Enter in the code editor');
    await bounded(tab.keyboard.type('const a = [1, 2, 3];\nconst b = a.map((x) => x * 2);\n// ünï 日本\n'), 'fast typing in the code editor');
    await answers('typing in the code editor', tab);
    const typed = await textOf(editor);
    expect(typed).toContain('const a = [1, 2, 3];\nconst b = a.map((x) => x * 2);\n// ünï 日本\n');
    const source = tab.getByRole('region', { name: 'Source' });
    await source.getByText('Not deployed yet').waitFor();
    await source.getByRole('button', { name: 'Revert' }).click();
    await source.getByText('Not deployed yet').waitFor({ state: 'detached' });
    const deployed = (await api('GET', `/api/projects/${p.id}/functions/greet`)).source as string;
    expect(await textOf(editor)).toBe(deployed);

    const event = tab.getByLabel('Event (JSON)', { exact: true });
    await event.click();
    await tab.keyboard.press('Control+End');
    await bounded(tab.keyboard.press('Enter'), 'Enter in the JSON editor');
    await bounded(tab.keyboard.type('\n\n{"a": [1, 2, 3], "b": "ünï"}\n'), 'fast typing in the JSON editor');
    await answers('typing in the JSON editor', tab);
    expect(await textOf(event)).toMatch(/\}\n\n\n\{"a": \[1, 2, 3\], "b": "ünï"\}\n$/);
    expect(own.problems.errors.join('\n')).toBe('');
    await tab.context().close();
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

    // Its name (never its value) is completed after plinth.env. in the editor.
    await page.goto(`/_/#/p/${p.id}/functions/greet`);
    const editor = page.getByLabel('Source of greet', { exact: true });
    await editor.click();
    await page.keyboard.press('Control+End');
    await bounded(page.keyboard.type('plinth.env.'), 'typing');
    await expect.poll(optionLabels).toEqual(['STRIPE_KEY']);
    expect(await page.content()).not.toContain(SECRET_VALUE);
    await page.keyboard.press('Escape');
    await page.getByRole('region', { name: 'Source' }).getByRole('button', { name: 'Revert' }).click();
    await page.goto(`/_/#/p/${p.id}/functions`);

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
