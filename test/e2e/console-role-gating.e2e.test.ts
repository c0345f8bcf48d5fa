/**
 * Role gating across the console (docs/teams.md "The console"), in Chromium: a viewer finds
 * "New function", "New document", the record editor's Save and Delete, "Add endpoint", and the
 * mail audiences' and broadcasts' create controls disabled with the reason on screen; a
 * developer may create documents and functions and save a record, but not rotate keys (hidden)
 * nor set function secrets (disabled, with the reason). The Account screen lists the operator's sessions and
 * revokes another one, which is then signed out. axe finds no serious violation.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { addMember } from '../modules/members/helpers.js';
import { browserGate, expectAccessible, openPage, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-role-gating.e2e.test.ts');
let rig: Rig;
let p: TestProject;
const as: Record<'developer' | 'viewer', TestOperator> = {} as never;
let docId: string;

async function pageAs(op: TestOperator): Promise<{ page: Page; errors: string[] }> {
  const { page, problems } = await openPage(rig);
  await signIn(page, op.email, op.password);
  return { page, errors: problems.errors };
}

beforeAll(async () => {
  if (!run) return;
  rig = await startRig();
  const owner = await makeOperator(rig.env.ctx, { email: 'owner@example.com' });
  p = await makeProject(rig.env.ctx, owner, 'Gated');
  as.developer = await addMember(rig.env, p.id, 'developer', owner.id, await makeOperator(rig.env.ctx, { email: 'dev@example.com' }));
  as.viewer = await addMember(rig.env, p.id, 'viewer', owner.id, await makeOperator(rig.env.ctx, { email: 'viewer@example.com' }));
  const res = await rig.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: owner.auth, payload: { name: 'posts', schema: [{ key: 'title', type: 'String' }] } });
  expect(res.statusCode, res.body).toBe(201);
  const doc = await rig.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/data/posts`, headers: owner.auth, payload: { title: 'Hello' } });
  expect(doc.statusCode, doc.body).toBe(201);
  docId = (doc.json() as { data: { _id: string } }).data._id;
}, 120_000);
afterAll(async () => rig?.close());

const VIEWER_REASON = 'Needs the developer role or higher; your role is viewer.';

describe.skipIf(!run)('console: role gating', { timeout: 120_000 }, () => {
  it('a viewer: functions, records (and the record editor), webhooks and mail offer no write, each saying why', async () => {
    const { page, errors } = await pageAs(as.viewer);
    await page.goto(`/_/#/p/${p.id}/functions`);
    const create = page.getByRole('button', { name: 'New function' });
    await create.waitFor();
    expect(await create.isDisabled()).toBe(true);
    expect(await create.getAttribute('title')).toBe(VIEWER_REASON);
    await page.getByText(`Creating functions: ${VIEWER_REASON}`).waitFor();
    await expectAccessible(page, 'functions (viewer)');

    await page.goto(`/_/#/p/${p.id}/data/posts`);
    const newDoc = page.getByRole('button', { name: 'New document' });
    await newDoc.waitFor();
    expect(await newDoc.isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Import' }).isDisabled()).toBe(true);
    // The record editor panel: the document reads, its Save and Delete say why they are off.
    await page.getByRole('button', { name: docId }).click();
    const panel = page.getByRole('complementary', { name: `Document ${docId}` });
    const save = panel.getByRole('button', { name: 'Save', exact: true });
    await save.waitFor();
    expect(await save.isDisabled()).toBe(true);
    expect(await save.getAttribute('title')).toBe(VIEWER_REASON);
    expect(await panel.getByRole('button', { name: 'Delete', exact: true }).isDisabled()).toBe(true);
    expect(await panel.getByRole('button', { name: 'Delete permanently' }).isDisabled()).toBe(true);
    await panel.getByText(`Saving, deleting and restoring this document: ${VIEWER_REASON}`).waitFor();
    await expectAccessible(page, 'records (viewer)');

    await page.goto(`/_/#/p/${p.id}/webhooks`);
    await page.getByText(`Adding, changing, testing and deleting endpoints: ${VIEWER_REASON}`).waitFor();
    expect(await page.getByRole('button', { name: 'Add endpoint' }).isDisabled()).toBe(true);
    await expectAccessible(page, 'webhooks (viewer)');

    await page.goto(`/_/#/p/${p.id}/mail/audiences`);
    await page.getByText(`Creating and deleting audiences and their contacts: ${VIEWER_REASON}`).waitFor();
    const createAudience = page.getByRole('button', { name: 'Create', exact: true });
    expect(await createAudience.isDisabled()).toBe(true);
    expect(await createAudience.getAttribute('title')).toBe(VIEWER_REASON);
    await expectAccessible(page, 'mail audiences (viewer)');

    await page.goto(`/_/#/p/${p.id}/mail/broadcasts`);
    await page.getByText(`Creating, sending and deleting broadcasts: ${VIEWER_REASON}`).waitFor();
    const createDraft = page.getByRole('button', { name: 'Create draft' });
    expect(await createDraft.isDisabled()).toBe(true);
    expect(await createDraft.getAttribute('title')).toBe(VIEWER_REASON);
    await expectAccessible(page, 'mail broadcasts (viewer)');
    expect(errors).toEqual([]);
  });

  it('a developer edits records and creates functions, but key rotation is hidden and secrets are an admin\'s', async () => {
    const { page, errors } = await pageAs(as.developer);
    await page.goto(`/_/#/p/${p.id}/data/posts`);
    const newDoc = page.getByRole('button', { name: 'New document' });
    await newDoc.waitFor();
    expect(await newDoc.isEnabled()).toBe(true);
    await page.getByRole('button', { name: docId }).click();
    const panel = page.getByRole('complementary', { name: `Document ${docId}` });
    const save = panel.getByRole('button', { name: 'Save', exact: true });
    await save.waitFor();
    expect(await save.isEnabled()).toBe(true);
    expect(await save.getAttribute('title')).toBeNull();
    expect(await page.getByText(VIEWER_REASON).count()).toBe(0);
    await expectAccessible(page, 'record editor (developer)');

    await page.goto(`/_/#/p/${p.id}/functions`);
    await page.getByRole('button', { name: 'New function' }).waitFor();
    expect(await page.getByRole('button', { name: 'New function' }).isEnabled()).toBe(true);
    const setSecret = page.getByRole('button', { name: 'Set secret' });
    await setSecret.waitFor();
    expect(await setSecret.getAttribute('title')).toBe('Needs the admin role or higher; your role is developer.');
    await page.getByText('Setting and deleting secrets: Needs the admin role or higher; your role is developer.').waitFor();
    await expectAccessible(page, 'functions (developer)');

    await page.goto(`/_/#/p/${p.id}/settings`);
    await page.getByRole('heading', { name: /Settings/ }).first().waitFor();
    expect(await page.getByRole('button', { name: /Rotate/ }).count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('Account lists the sessions, this one marked, and revokes another, which is signed out', async () => {
    const other = await pageAs(as.developer);
    const { page, errors } = await pageAs(as.developer);
    await page.goto('/_/#/account');
    const sessions = page.locator('section', { has: page.getByRole('heading', { name: 'Sessions' }) });
    await sessions.getByText('This session').waitFor();
    const rows = sessions.locator('tbody tr');
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(2);
    await expectAccessible(page, 'account sessions');
    await page.getByRole('button', { name: 'Revoke all other sessions' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    // The other browser's next request fails, and it lands on the sign-in screen.
    await other.page.goto(`/_/#/p/${p.id}/functions`);
    await other.page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(errors).toEqual([]);
  });
});
