/**
 * User administration in the console (docs/dashboard.md "End users"): the operator creates a
 * user in the users screen's form, sets a read-only role and a hidden field (which no app can
 * set), marks the email verified, and sees the role in the list and in the user's own answer.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOperator, makeProject, USERS_FIELDS, type TestProject } from '../helpers/fixtures.js';
import { browserGate, expectAccessible, openPage, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-user-admin.e2e.test.ts');
let rig: Rig;
let p: TestProject;
let page: Page;
let problems: { errors: string[] };

const SCHEMA = [
  ...USERS_FIELDS,
  { key: 'role', type: 'String', readOnly: true, default: 'reader' },
  { key: 'notes', type: 'String', hidden: 'secret' },
];

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  const op = await makeOperator(rig.env.ctx, { email: 'useradmin@example.com' });
  p = await makeProject(rig.env.ctx, op, 'Members');
  const res = await rig.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: op.auth, payload: { name: 'users', schema: SCHEMA } });
  expect(res.statusCode, res.body).toBe(201);
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => rig?.close());

describe.skipIf(!run)('console: user administration', { timeout: 120_000 }, () => {
  it('creates a user, sets a role and a hidden field, and sees the role', async () => {
    await page.goto(`/_/#/p/${p.id}/users`);
    await page.getByRole('button', { name: 'New user' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Email', { exact: true }).fill('zoë@example.com');
    await dialog.getByLabel('Password', { exact: true }).fill('correct horse 1');
    await dialog.getByLabel('role').fill('editor');
    await expectAccessible(page, 'new user');
    await dialog.getByRole('button', { name: 'Create user' }).click();
    await page.getByText('User created').waitFor();
    await page.getByRole('cell', { name: 'editor' }).waitFor();

    // Edit: promote, note, verify. The form shows the stored values, hidden ones included.
    await page.getByRole('button', { name: 'Edit zoë@example.com' }).click();
    await expect.poll(() => dialog.getByLabel('role').inputValue()).toBe('editor');
    await dialog.getByLabel('role').fill('admin');
    await dialog.getByLabel('notes').fill('Ops lead ✓');
    await dialog.getByLabel('Email verified').check();
    await dialog.getByRole('button', { name: 'Save user' }).click();
    await page.getByText('User saved').waitFor();
    await page.getByRole('cell', { name: 'admin' }).waitFor();
    await page.getByRole('cell', { name: 'verified', exact: true }).waitFor();

    // The user signs in and the role is theirs; the secret-hidden note is not shown to them.
    const login = await rig.env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email: 'zoë@example.com', password: 'correct horse 1' } });
    expect(login.statusCode, login.body).toBe(200);
    expect(login.json().data.user).toMatchObject({ role: 'admin', emailVerified: true });
    expect(login.json().data.user.notes).toBeUndefined();
    const admin = await rig.env.app.inject({ method: 'GET', url: `/api/userAuth/admin/users?email=zo`, headers: p.sk });
    expect(admin.json().data.items[0]).toMatchObject({ role: 'admin', notes: 'Ops lead ✓' });
    expect(problems.errors).toEqual([]);
  });
});
