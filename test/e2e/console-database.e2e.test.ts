/**
 * The Database screen (issue 50 item 5), in Chromium: a project with two collections with access
 * rules shows their policies as pg_policies holds them (and no other project's partitions), the
 * partitions' indexes and tables, the slow-statements tab saying why it is unavailable; the
 * Migrations tab is the platform admin's only, and shows a tampered checksum as drift. axe finds
 * no serious violation; no horizontal scroll at 390 px.
 */
import type { Page } from 'playwright-core';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../helpers/fixtures.js';
import { browserGate, expectAccessible, expectNoHorizontalScroll, openPage, shot, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-database.e2e.test.ts');
let rig: Rig;
let op: TestOperator;
let admin: TestOperator;
let p: TestProject;
let otherPartition: string;
let page: Page;
let problems: { errors: string[] };

async function collection(project: TestProject, name: string, rules: Record<string, string>): Promise<string> {
  const made = await rig.env.app.inject({
    method: 'POST',
    url: `/api/projects/${project.id}/collections`,
    headers: project.owner.auth,
    payload: { name, schema: [{ key: 'author', type: 'String', index: true }, { key: 'title', type: 'String' }] },
  });
  expect(made.statusCode, made.body).toBe(201);
  const set = await rig.env.app.inject({ method: 'PATCH', url: `/api/projects/${project.id}/collections/${name}/rules`, headers: project.owner.auth, payload: rules });
  expect(set.statusCode, set.body).toBe(200);
  return `documents_${made.json().data._id}`;
}

beforeAll(async () => {
  if (!run) return;
  rig = await startRig({ ADMIN_EMAIL: 'dba-admin@example.com' });
  op = await makeOperator(rig.env.ctx, { email: 'dba@example.com' });
  admin = await makeOperator(rig.env.ctx, { email: 'dba-admin@example.com' });
  p = await makeProject(rig.env.ctx, op, 'Warehouse');
  await collection(p, 'posts', { list: 'author = @auth.id' });
  await collection(p, 'comments', { create: 'author = @auth.id' });
  otherPartition = await collection(await makeProject(rig.env.ctx, undefined, 'Other'), 'secrets', { list: 'title = "x"' });
  ({ page, problems } = await openPage(rig));
  await signIn(page, op.email, op.password);
}, 120_000);
afterAll(async () => rig?.close());

describe.skipIf(!run)('console: database', { timeout: 120_000 }, () => {
  it("shows the project's policies, indexes, tables and why slow statements are unavailable; no Migrations tab for an owner", async () => {
    await page.goto(`/_/#/p/${p.id}/database`);
    await page.getByRole('heading', { name: 'Database', level: 1 }).waitFor();
    const tabs = page.getByRole('navigation', { name: 'Database sections' });
    expect(await tabs.getByRole('link').allTextContents()).toEqual(['Policies', 'Indexes', 'Tables', 'Slow statements']);
    const own = page.getByRole('region', { name: "Policies of the collections' partitions" });
    const read = own.locator('tbody tr', { hasText: 'documents_read' }).filter({ hasText: 'posts' });
    await read.waitFor();
    const expected = await sql<{ qual: string }>`SELECT qual FROM pg_policies p JOIN collections c ON p.tablename = 'documents_' || c.id
      WHERE c.project_id = ${p.id} AND c.name = 'posts' AND p.policyname = 'documents_read'`.execute(rig.env.ctx.db.admin);
    expect(await read.textContent()).toContain(expected.rows[0]!.qual);
    expect(await own.locator('tbody tr', { hasText: 'documents_insert' }).filter({ hasText: 'comments' }).count()).toBe(1);
    expect(await page.locator('main').textContent()).not.toContain(otherPartition);
    await expectAccessible(page, 'database policies (light)');
    await shot(page, 'database-policies', { doc: true });

    await tabs.getByRole('link', { name: 'Indexes' }).click();
    const indexes = page.getByRole('region', { name: 'Indexes' });
    await indexes.locator('tbody tr').first().waitFor();
    expect(await indexes.textContent()).toContain('posts (documents_');
    expect(await indexes.textContent()).not.toContain(otherPartition);

    await tabs.getByRole('link', { name: 'Tables' }).click();
    const tables = page.getByRole('region', { name: 'Tables' });
    await expect.poll(() => tables.locator('tbody tr').count()).toBe(2);

    await tabs.getByRole('link', { name: 'Slow statements' }).click();
    await page.getByText('Statement statistics are not available').waitFor();
    expect(await page.locator('main').textContent()).toContain('pg_stat_statements');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'database statements (dark)');
    await page.emulateMedia({ colorScheme: 'light' });

    // The migrations are the admin's: an owner who types the address sees the policies instead.
    await page.goto(`/_/#/p/${p.id}/database/migrations`);
    await page.getByRole('region', { name: "Policies of the collections' partitions" }).waitFor();
    expect(problems.errors).toEqual([]);
  });

  it('at 390 px: no horizontal scroll on any tab', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      for (const [tab, ready] of [['policies', 'tbody tr'], ['indexes', 'tbody tr'], ['tables', 'tbody tr']] as const) {
        await page.goto(`/_/#/p/${p.id}/database/${tab}`);
        await page.locator(`.dbview ${ready}`).first().waitFor();
        await expectNoHorizontalScroll(page, `database ${tab}`);
      }
      await page.goto(`/_/#/p/${p.id}/database/policies`);
      await page.locator('.db-shared summary').click();
      await page.getByRole('region', { name: 'Policies of the shared tenant tables' }).locator('tbody tr').first().waitFor();
      await expectNoHorizontalScroll(page, 'database shared policies');
      await expectAccessible(page, 'database at 390 px');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('the admin sees the Migrations tab, in sync, then a tampered checksum as drift', async () => {
    const own = await makeProject(rig.env.ctx, admin, 'Admin project');
    const { page: adminPage } = await openPage(rig);
    await signIn(adminPage, admin.email, admin.password);
    await adminPage.goto(`/_/#/p/${own.id}/database/migrations`);
    await adminPage.getByText(/^In sync:/).waitFor();
    const grid = adminPage.getByRole('region', { name: 'Migrations' });
    expect(await grid.locator('tbody tr', { hasText: '001_foundation' }).textContent()).toMatch(/[0-9a-f]{64}/);
    await sql`UPDATE plinth_migration_checksums SET checksum = ${'a'.repeat(64)} WHERE name = '003_data'`.execute(rig.env.ctx.db.admin);
    await adminPage.reload();
    await adminPage.getByText(/^Drift: 1 changed/).waitFor();
    const changed = grid.locator('tbody tr', { hasText: '003_data' });
    expect(await changed.textContent()).toContain('changed since applied');
    expect(await changed.textContent()).toContain('a'.repeat(64));
    await expectAccessible(adminPage, 'database migrations');
    await adminPage.setViewportSize({ width: 390, height: 800 });
    await expectNoHorizontalScroll(adminPage, 'database migrations');
    await adminPage.context().close();
  });
});
