/**
 * `@plinth/client/mfa` in Node against a running Plinth: an authenticator app enrolled and
 * confirmed (the session becomes aal2), a sign-in that then asks for the second factor and
 * finishes with a code and, on another sign-in, with a recovery code; step-up of an aal1 session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../packages/client/src/index.js';
import { mfa } from '../../packages/client/src/mfa.js';
import { totpCode } from '../../src/lib/identity/totp.js';
import { PASSWORD, uniqueEmail } from '../modules/auth/helpers.js';
import { runPlinth, type Running } from './helpers.js';

let r: Running;
beforeAll(async () => {
  r = await runPlinth();
});
afterAll(() => r.env.close());

const aalOf = (token: string) => JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).aal as string;
const client = () => createClient({ url: r.url, apiKey: r.p.publishableKey, auth: { storage: 'memory' } });

describe('second factors', () => {
  it('enrol an app, then sign in in two steps (code, then recovery code); step up', async () => {
    const c = client();
    const email = uniqueEmail('mfa');
    await c.auth.signUp({ email, password: PASSWORD });
    const f = client();
    await f.auth.signIn({ email, password: PASSWORD }); // before the factor: an aal1 session
    const m = mfa(c);
    const { secret, otpauthUri } = await m.enrollTotp();
    expect(otpauthUri).toMatch(/^otpauth:\/\/totp\//);
    const code = () => totpCode(secret, r.env.clock.now()); // the server's clock, moved a step before each new code
    const { recoveryCodes } = await m.confirmTotp(code());
    expect(recoveryCodes).toHaveLength(10);
    expect(aalOf((await c.auth.getSession())!.accessToken)).toBe('aal2');
    expect(await m.factors()).toMatchObject({ totp: { confirmed: true }, passkeys: [], recoveryCodesLeft: 10, aal: 'aal2' });

    const d = client();
    const first = await d.auth.signIn({ email, password: PASSWORD });
    expect(first).toMatchObject({ mfaRequired: true, methods: expect.arrayContaining(['totp']) });
    if (!first.mfaRequired) throw new Error('expected a challenge');
    r.env.clock.advance(30_000); // a code of a newer step than the one confirmed
    const done = await d.auth.verifySecondFactor({ challengeId: first.challengeId, code: code() });
    expect(done.user.email).toBe(email);
    expect(aalOf(done.session.accessToken)).toBe('aal2');

    const e = client();
    const again = await e.auth.signIn({ email, password: PASSWORD });
    if (!again.mfaRequired) throw new Error('expected a challenge');
    await e.auth.verifySecondFactor({ challengeId: again.challengeId, recoveryCode: recoveryCodes[0]! });
    expect((await mfa(e).factors()).recoveryCodesLeft).toBe(9);

    // a session opened before the factor existed (aal1) is stepped up with a fresh code
    expect(aalOf((await f.auth.getSession())!.accessToken)).toBe('aal1');
    r.env.clock.advance(30_000);
    await mfa(f).stepUp({ code: code() });
    expect(aalOf((await f.auth.getSession())!.accessToken)).toBe('aal2');
  });
});
