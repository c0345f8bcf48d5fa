/**
 * Teams in the console (docs/teams.md), in Chromium: an admin sees the Members screen with every
 * control (invite, change role, remove, pending invitations with revoke), invites an address
 * and revokes it, and sees key rotation in Settings; a viewer sees the members but no invite
 * form, disabled Remove buttons, no key rotation, and a disabled Save with the reason; a
 * developer may edit a schema, a viewer may not (disabled, with the reason); an invited
 * operator opens the mailed link and joins. axe finds no serious violation on each screen.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { addMember, invitationToken } from '../modules/members/helpers.js';
import { browserGate, expectAccessible, openPage, shot, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-teams.e2e.test.ts');
let rig: Rig;
let p: TestProject;
const as: Record<'admin' | 'developer' | 'viewer', TestOperator> = {} as never;

async function pageAs(op: TestOperator): Promise<{ page: Page; errors: string[] }> {
  const { page, problems } = await openPage(rig);
  await signIn(page, op.email, op.password);
  return { page, errors: problems.errors };
}

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  const owner = await makeOperator(rig.env.ctx, { email: 'owner@example.com' });
  p = await makeProject(rig.env.ctx, owner, 'Shared');
  as.admin = await addMember(rig.env, p.id, 'admin', owner.id, await makeOperator(rig.env.ctx, { email: 'admin@example.com' }));
  as.developer = await addMember(rig.env, p.id, 'developer', owner.id, await makeOperator(rig.env.ctx, { email: 'dev@example.com' }));
  as.viewer = await addMember(rig.env, p.id, 'viewer', owner.id, await makeOperator(rig.env.ctx, { email: 'viewer@example.com' }));
  const res = await rig.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: owner.auth, payload: { name: 'posts', schema: [{ key: 'title', type: 'String' }] } });
  expect(res.statusCode, res.body).toBe(201);
}, 120_000);
afterAll(async () => rig?.close());

describe.skipIf(!run)('console: teams', { timeout: 120_000 }, () => {
  it('an admin manages members: invites, sees the pending invitation, revokes it; rotates keys', async () => {
    const { page, errors } = await pageAs(as.admin);
    await page.goto(`/_/#/p/${p.id}/members`);
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    const rows = page.locator('table').first().locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(4);
    expect(await rows.filter({ hasText: 'owner@example.com' }).getByRole('button', { name: /Remove/ }).isDisabled()).toBe(true);
    expect(await rows.filter({ hasText: 'dev@example.com' }).getByRole('button', { name: /Remove/ }).isEnabled()).toBe(true);
    expect(await page.getByLabel('Role of dev@example.com').isEnabled()).toBe(true);

    await page.getByLabel('Email').fill('newcomer@example.com');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const pending = page.locator('table', { has: page.locator('caption', { hasText: 'Pending invitations' }) });
    await pending.locator('tbody tr', { hasText: 'newcomer@example.com' }).waitFor();
    await expectAccessible(page, 'members (admin)');
    await shot(page, 'members-admin');
    await page.getByRole('button', { name: 'Revoke the invitation of newcomer@example.com' }).click();
    await page.getByText('None.').waitFor();

    await page.goto(`/_/#/p/${p.id}/settings`);
    await page.getByRole('button', { name: 'Rotate secret key' }).waitFor();
    expect(await page.getByRole('button', { name: 'Save settings' }).isEnabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Delete project' }).isDisabled()).toBe(true);
    await page.getByText('Needs the owner role; your role is admin.').waitFor();
    expect(errors).toEqual([]);
  });

  it('a viewer reads members and settings, with every control they may not use hidden or disabled, saying why', async () => {
    const { page, errors } = await pageAs(as.viewer);
    await page.goto(`/_/#/p/${p.id}/members`);
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await page.locator('table tbody tr', { hasText: 'admin@example.com' }).waitFor();
    expect(await page.getByRole('button', { name: 'Send invitation' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Pending invitations' }).count()).toBe(0);
    const remove = page.locator('table tbody tr', { hasText: 'dev@example.com' }).getByRole('button', { name: /Remove/ });
    expect(await remove.isDisabled()).toBe(true);
    expect(await remove.getAttribute('title')).toContain('Needs the admin role or higher; your role is viewer.');
    await page.getByText('Inviting, changing roles and removing members: Needs the admin role or higher; your role is viewer.').waitFor();
    await expectAccessible(page, 'members (viewer)');

    await page.goto(`/_/#/p/${p.id}/settings`);
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    expect(await page.getByRole('button', { name: /Rotate/ }).count()).toBe(0);
    await page.getByText('Key rotation is hidden: Needs the admin role or higher; your role is viewer.').waitFor();
    expect(await page.getByRole('button', { name: 'Save settings' }).isDisabled()).toBe(true);
    expect(await page.content()).not.toContain(p.secretKey);
    await expectAccessible(page, 'settings (viewer)');

    await page.goto(`/_/#/p/${p.id}/collections/posts`);
    await page.getByRole('heading', { name: 'posts', level: 1 }).waitFor();
    expect(await page.getByRole('button', { name: 'Save schema' }).isDisabled()).toBe(true);
    await page.getByText('You can read this schema. Editing it: Needs the developer role or higher; your role is viewer.').waitFor();
    await shot(page, 'schema-viewer');
    expect(errors).toEqual([]);
  });

  it('a developer edits a schema', async () => {
    const { page, errors } = await pageAs(as.developer);
    await page.goto(`/_/#/p/${p.id}/collections/posts`);
    await page.getByRole('heading', { name: 'posts', level: 1 }).waitFor();
    const save = page.getByRole('button', { name: 'Save schema' });
    expect(await save.isEnabled()).toBe(true);
    await save.click();
    await page.getByText('Schema saved').waitFor();
    expect(await page.getByText('You can read this schema').count()).toBe(0);
    await expectAccessible(page, 'schema (developer)');
    expect(errors).toEqual([]);
  });

  it('an invited operator opens the mailed link, signed in with the invited address, and joins', async () => {
    const invited = await makeOperator(rig.env.ctx, { email: 'invited@example.com' });
    const res = await rig.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/members/invitations`, headers: as.admin.auth, payload: { email: invited.email, role: 'developer' } });
    expect(res.statusCode, res.body).toBe(201);
    const token = await invitationToken(rig.env, invited.email);
    const { page, errors } = await pageAs(invited);
    await page.goto(`/_/#/invitations/${token}`);
    await page.getByText('invites invited@example.com to the project Shared as developer').waitFor();
    await expectAccessible(page, 'invitation');
    await page.getByRole('button', { name: 'Join Shared' }).click();
    await page.getByText('Your role: developer').first().waitFor();
    expect(errors).toEqual([]);
  });
});

export type { Browser };
