/**
 * The console's two-step sign-in in Chromium: an operator sets up an authenticator app from the
 * QR code on the Account screen, sees the recovery codes once, then signs in again in two steps
 * (password, then the app's code). axe finds no serious violation on these screens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/lib/identity/totp.js';
import { makeOperator } from '../helpers/fixtures.js';
import { browserGate, expectAccessible, openPage, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-mfa.e2e.test.ts');
let rig: Rig;

beforeAll(async () => {
  if (run) rig = await startRig();
}, 120_000);
afterAll(async () => rig?.close());

describe.skipIf(!run)('console: two-step sign-in', { timeout: 120_000 }, () => {
  it('enrols an authenticator app with the QR code, shows the recovery codes once, then signs in in two steps', async () => {
    const op = await makeOperator(rig.env.ctx);
    const { page, problems } = await openPage(rig);
    await signIn(page, op.email, op.password);
    await page.goto('/_/#/account');
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    await page.getByRole('button', { name: 'Set up authenticator app' }).click();
    const qr = page.getByRole('img', { name: /QR code/ });
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
    await expectAccessible(page, 'authenticator enrolment');
    const secret = (await page.locator('code').first().textContent())!.trim();
    await page.getByLabel('Code from the app').fill(totpCode(secret, rig.env.clock.now()));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    const codes = await page.locator('.recovery-codes code').allTextContents();
    expect(codes).toHaveLength(10);
    await expectAccessible(page, 'recovery codes');
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText('Recovery codes left: 10').waitFor();
    expect(await page.content()).not.toContain(codes[0]);

    // A new browser: the password alone no longer opens the console.
    const second = await openPage(rig);
    await second.page.goto('/_/#/login');
    await second.page.getByLabel('Email').fill(op.email);
    await second.page.getByLabel('Password').fill(op.password);
    await second.page.getByRole('button', { name: 'Sign in' }).click();
    await second.page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    await expectAccessible(second.page, 'two-step sign-in');
    rig.env.clock.advance(30_000);
    await second.page.getByLabel('Code from your authenticator app').fill(totpCode(secret, rig.env.clock.now()));
    await second.page.getByRole('button', { name: 'Verify' }).click();
    await second.page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect(problems.errors).toEqual([]);
    expect(second.problems.errors).toEqual([]);
  });
});
