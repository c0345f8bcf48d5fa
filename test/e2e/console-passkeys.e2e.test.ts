/**
 * The console half of the passkey browser test, in Chromium with the DevTools WebAuthn virtual
 * authenticator: an operator adds a passkey on the Account screen (the recovery codes are shown
 * once), sets up an authenticator app beside it (the QR code), then signs in with the passkey
 * alone (no email typed) and as the second step of a password sign-in. And the Users screen:
 * the operator sees an end user's factors (kinds, names, dates; never a secret) and resets them.
 * axe finds no serious violation on these screens. The console is opened as http://localhost
 * (a relying party id must be a name, not an IP address): PUBLIC_URL, hence
 * DASHBOARD_URL, is that address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { totpCode } from '../../src/lib/identity/totp.js';
import { makeOperator, makeProject, USERS_FIELDS } from '../helpers/fixtures.js';
import { browserGate, expectAccessible, openPage, signIn, startRig, type Rig } from './harness.js';

const run = browserGate('console-passkeys.e2e.test.ts');
let rig: Rig;

beforeAll(async () => {
  if (!run) return;
  rig = await startRig({}, { hostname: 'localhost' });
}, 120_000);
afterAll(async () => rig?.close());

async function withAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
}

async function signOut(page: Page): Promise<void> {
  await page.context().clearCookies();
  await page.goto('/_/#/login');
  await page.reload();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
}

describe.skipIf(!run)('console: passkeys', { timeout: 180_000 }, () => {
  it('an operator adds a passkey (recovery codes once), then signs in with it alone and as the second step', async () => {
    const op = await makeOperator(rig.env.ctx);
    const { page, problems } = await openPage(rig);
    await signIn(page, op.email, op.password);
    await withAuthenticator(page);
    await page.goto('/_/#/account');
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    await page.getByLabel('Passkey name').fill('Chromium');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    const codes = await page.locator('.recovery-codes code').allTextContents();
    expect(codes).toHaveLength(10);
    await expectAccessible(page, 'recovery codes after the first passkey');
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByRole('cell', { name: 'Chromium', exact: true }).waitFor();
    await page.getByText('Recovery codes left: 10').waitFor();
    expect(await page.content()).not.toContain(codes[0]);
    await expectAccessible(page, 'account with a passkey');

    // The authenticator app beside it (the session is aal2 since the passkey): the QR code screen.
    await page.getByRole('button', { name: 'Set up authenticator app' }).click();
    const qr = page.getByRole('img', { name: /QR code/ });
    await qr.waitFor();
    await expectAccessible(page, 'authenticator enrolment beside a passkey');
    const secret = (await page.locator('code').first().textContent())!.trim();
    await page.getByLabel('Code from the app').fill(totpCode(secret, rig.env.clock.now()));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText('An authenticator app is enrolled.').waitFor();

    // Signed out: the passkey alone signs in, no email typed.
    await signOut(page);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    const passkeySession = (await page.context().cookies()).find((c) => c.name === 'accessToken');
    expect(passkeySession).toBeTruthy();

    // Signed out again: the password, then the passkey as the second step.
    await signOut(page);
    await page.getByLabel('Email').fill(op.email);
    await page.getByLabel('Password').fill(op.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    await expectAccessible(page, 'two-step sign-in with a passkey');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    const rows = await rig.env.ctx.db.admin.selectFrom('operator_passkeys').select(['name', 'last_used_at']).where('operator_id', '=', op.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.name).toBe('Chromium');
    expect(rows[0]!.last_used_at).not.toBeNull();
    expect(problems.errors).toEqual([]);
  });

  it("an operator sees an end user's second factors (no secret) on the Users screen and resets them", async () => {
    const op = await makeOperator(rig.env.ctx);
    const p = await makeProject(rig.env.ctx, op, 'Shop');
    const call = async (method: string, url: string, headers: Record<string, string>, payload?: object) => {
      const res = await rig.env.app.inject({ method: method as 'POST', url, headers, payload });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return res.json().data;
    };
    await call('POST', `/api/projects/${p.id}/collections`, op.auth, { name: 'users', schema: USERS_FIELDS });
    const s = await call('POST', '/api/userAuth/signup', p.pk, { email: 'ann@example.com', password: 'correct horse 1' });
    const userAuth = { ...p.pk, authorization: `Bearer ${s.accessToken}` };
    const { secret } = await call('POST', '/api/userAuth/mfa/totp/enroll', userAuth);
    await call('POST', '/api/userAuth/mfa/totp/confirm', userAuth, { code: totpCode(secret, rig.env.clock.now()) });

    const { page, problems } = await openPage(rig);
    await signIn(page, op.email, op.password);
    await page.goto(`/_/#/p/${p.id}/users`);
    await page.getByRole('cell', { name: 'ann@example.com', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Second factors' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('cell', { name: 'Authenticator app' }).waitFor();
    await dialog.getByText('Recovery codes left: 10').waitFor();
    expect(await page.content()).not.toContain(secret);
    await expectAccessible(page, "a user's second factors");
    await dialog.getByRole('button', { name: 'Reset second factors' }).click();
    await page.getByRole('button', { name: 'Reset', exact: true }).click();
    await page.getByText('No second factor').waitFor();
    const login = await rig.env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email: 'ann@example.com', password: 'correct horse 1' } });
    expect(login.json().data.accessToken).toBeTruthy();
    expect(problems.errors).toEqual([]);
  });
});

describe.skipIf(!run)('console: passkeys on a host name', { timeout: 180_000 }, () => {
  let named: Rig;
  beforeAll(async () => {
    named = await startRig({}, { hostname: 'console.plinth.test' });
  }, 120_000);
  afterAll(async () => named?.close());

  it('the relying party is the console\'s host name: a passkey made there signs in there, with nothing else configured', async () => {
    const op = await makeOperator(named.env.ctx);
    const { page, problems } = await openPage(named);
    await signIn(page, op.email, op.password);
    await withAuthenticator(page);
    await page.goto('/_/#/account');
    await page.getByLabel('Passkey name').fill('On a name');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByRole('cell', { name: 'On a name', exact: true }).waitFor();
    await signOut(page);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect(new URL(page.url()).hostname).toBe('console.plinth.test');
    expect(problems.errors).toEqual([]);
  });
});
