/**
 * The console in Chromium: serving (/_/ with its cache and CSP headers, / for browsers),
 * registration and sign-in, the project list, project creation with the keys shown once,
 * settings and key rotation, deletion by typing the name; accessibility on each screen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserGate, expectAccessible, openPage, shot, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-auth-projects.e2e.test.ts');
let rig: Rig;

beforeAll(async () => {
  if (run) rig = await startRig();
}, 120_000);
afterAll(async () => rig?.close());

describe.skipIf(!run)('console: sign-in and projects', { timeout: 120_000 }, () => {
  it('registers, signs in, creates a project (keys once), rotates a key and deletes the project', async () => {
    const { page, problems } = await openPage(rig);
    await page.goto('/');
    expect(page.url()).toBe(`${rig.base}/_/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessible(page, 'sign in');
    await shot(page, 'sign-in', { doc: true });

    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Name (optional)').fill('Ada');
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill('a long password');
    await expectAccessible(page, 'register');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.getByText('No projects yet').waitFor();
    await expectAccessible(page, 'projects (empty)');

    // Nothing secret in storage: the session is HttpOnly cookies.
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie);
    expect(stored).not.toMatch(/accessToken|refreshToken|eyJ/);

    await page.getByRole('button', { name: 'New project' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Shop');
    await page.getByRole('button', { name: 'Create project' }).click();
    const secret = page.getByRole('group', { name: 'Secret key' }).locator('code');
    await expect.poll(() => secret.textContent()).toMatch(/^sk_live_/);
    const firstSecret = (await secret.textContent())!;
    await expectAccessible(page, 'project created (keys)');
    await shot(page, 'project-keys');
    await page.getByRole('link', { name: 'Open the project' }).click();
    await page.getByRole('heading', { name: 'Collections' }).waitFor();

    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await page.getByLabel('Site URL').fill('https://shop.example.com');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved').waitFor();
    await page.getByRole('button', { name: 'Rotate secret key' }).click();
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    const rotated = page.getByRole('group', { name: 'New secret key' }).locator('code');
    await expect.poll(() => rotated.textContent()).toMatch(/^sk_live_/);
    const newSecret = (await rotated.textContent())!;
    expect(newSecret).not.toBe(firstSecret);
    const schemas = (key: string) => fetch(`${rig.base}/api/data/nothing`, { headers: { 'x-api-key': key } }).then((r) => r.status);
    expect(await schemas(firstSecret)).toBe(401);
    expect(await schemas(newSecret)).toBe(404);
    await expectAccessible(page, 'settings');
    await shot(page, 'settings', { doc: true });
    const project = await rig.env.ctx.db.admin.selectFrom('projects').select(['site_url']).executeTakeFirstOrThrow();
    expect(project.site_url).toBe('https://shop.example.com');

    await page.getByRole('button', { name: 'Delete project' }).click();
    // The dialog first: until it renders, `.last()` is the button that opened it.
    const typeName = page.getByLabel('Type “Shop” to confirm');
    await typeName.waitFor();
    const confirm = page.getByRole('button', { name: 'Delete project' }).last();
    expect(await confirm.isDisabled()).toBe(true);
    await typeName.fill('Shop');
    await confirm.click();
    await page.getByText('No projects yet').waitFor();
    expect(problems.errors).toEqual([]);
  });

  it('signs in again after signing out, at a narrow width too', async () => {
    const { page, problems } = await openPage(rig, { width: 420, height: 800 });
    await signIn(page, 'ada@example.com', 'a long password');
    await expectAccessible(page, 'projects (narrow)');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(problems.errors).toEqual([]);
  });

  it('serves the console with its cache rules and a strict CSP; API clients keep the JSON root', async () => {
    const index = await fetch(`${rig.base}/_/`);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const csp = index.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await index.text();
    expect(html).not.toMatch(/<script>(?!<)|<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=/);
    const asset = /src="\.\/(assets\/app-[A-Z0-9]+\.js)"/.exec(html)![1]!;
    const js = await fetch(`${rig.base}/_/${asset}`);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const root = await fetch(`${rig.base}/`, { headers: { accept: 'application/json' } });
    expect(await root.json()).toMatchObject({ status: 'success' });
    expect((await fetch(`${rig.base}/_/meta.json`)).status).toBe(404);
  });
});
