/**
 * End users' authenticator apps (TOTP), recovery codes and two-step sign-in, against the real
 * database: each test is named after what a user does or the attack it stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authTestEnv, cookieOf, refresh, signup } from '../auth/helpers.js';
import { bearer, challengeFor, claimsOf, codeAt, enrolledUser, enrolTotp, login, nextStep, verify } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ env, p } = await authTestEnv());
});
afterAll(() => env.close());

describe('enrolment', () => {
  it('gives an otpauth URI and a QR code, stores the secret encrypted, and confirms with a first code', async () => {
    const { body } = await signup(env, p);
    const e = await enrolTotp(env, p, body.data.accessToken);
    expect(e.otpauthUri).toMatch(/^otpauth:\/\/totp\/Test%20project:.+\?.*secret=[A-Z2-7]+/);
    expect(e.qrCode).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(e.qrCode.split(',')[1]!, 'base64').toString()).toContain('<svg');
    const row = await env.ctx.db.admin.selectFrom('app_user_totp').selectAll().where('user_id', '=', body.data.user._id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row.secret)).not.toContain(e.secret);
    expect(row.verified_at).toBeNull();

    const wrong = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/totp/confirm', headers: bearer(p, body.data.accessToken), payload: { code: '000000' } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().code).toBe('mfa_code_invalid');
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/totp/confirm', headers: bearer(p, body.data.accessToken), payload: { code: codeAt(env, e.secret) } });
    expect(res.statusCode).toBe(200);
    const { recoveryCodes, accessToken } = res.json().data;
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    expect(claimsOf(accessToken)).toMatchObject({ aal: 'aal2', amr: [{ method: 'pwd' }, { method: 'totp' }] });
    const stored = await env.ctx.db.admin.selectFrom('app_user_recovery_codes').select('code_hash').where('user_id', '=', body.data.user._id).execute();
    expect(stored).toHaveLength(10);
    for (const c of recoveryCodes) expect(stored.map((s) => s.code_hash).join()).not.toContain(c.replace('-', ''));
    // The session itself is aal2 now: its refresh gives aal2 tokens.
    const refreshed = await refresh(env, p, body.data.refreshToken);
    expect(claimsOf(refreshed.json().data.accessToken).aal).toBe('aal2');
  });

  it('tokens of users without a factor say aal1 and pwd (the SDK flow is otherwise unchanged)', async () => {
    const { body } = await signup(env, p);
    expect(claimsOf(body.data.accessToken)).toMatchObject({ aal: 'aal1', amr: [{ method: 'pwd' }], userId: body.data.user._id });
    const res = await login(env, p, body.data.user.email);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.accessToken).toBeTruthy();
    expect(res.json().data.mfaRequired).toBeUndefined();
  });
});

describe('two-step sign-in', () => {
  it('the password step returns a challenge and no tokens; the code completes it at aal2', async () => {
    const u = await enrolledUser(env, p);
    const first = await login(env, p, u.email);
    expect(first.statusCode).toBe(200);
    const data = first.json().data;
    expect(data).toMatchObject({ mfaRequired: true, methods: ['totp', 'recovery_code'], expiresIn: 300 });
    expect(data.accessToken).toBeUndefined();
    expect(data.user).toBeUndefined();
    expect(cookieOf(first)).toBeUndefined();
    expect(first.headers['x-refresh-token']).toBeUndefined();

    const res = await verify(env, p, { challengeId: data.challengeId, code: codeAt(env, u.secret) });
    expect(res.statusCode).toBe(200);
    const body = res.json().data;
    expect(body.user._id).toBe(u.userId);
    expect(claimsOf(body.accessToken)).toMatchObject({ aal: 'aal2', amr: [{ method: 'pwd' }, { method: 'totp' }] });
    expect(cookieOf(res)?.value).toBe(body.refreshToken);
    const refreshed = await refresh(env, p, body.refreshToken);
    expect(claimsOf(refreshed.json().data.accessToken)).toMatchObject({ aal: 'aal2' });
  });

  it('accepts a code one step old or one step ahead (clock drift), not two', async () => {
    const u = await enrolledUser(env, p);
    // Two steps past the enrolment's code, so the step before now was never used.
    nextStep(env);
    expect((await verify(env, p, { challengeId: await challengeFor(env, p, u.email), code: codeAt(env, u.secret, -2) })).statusCode).toBe(400);
    expect((await verify(env, p, { challengeId: await challengeFor(env, p, u.email), code: codeAt(env, u.secret, 2) })).statusCode).toBe(400);
    expect((await verify(env, p, { challengeId: await challengeFor(env, p, u.email), code: codeAt(env, u.secret, -1) })).statusCode).toBe(200);
    nextStep(env);
    expect((await verify(env, p, { challengeId: await challengeFor(env, p, u.email), code: codeAt(env, u.secret, 1) })).statusCode).toBe(200);
  });

  it('threat: a TOTP code replayed in the same window is refused, even on a fresh challenge', async () => {
    const u = await enrolledUser(env, p);
    const code = codeAt(env, u.secret);
    expect((await verify(env, p, { challengeId: await challengeFor(env, p, u.email), code })).statusCode).toBe(200);
    const replay = await verify(env, p, { challengeId: await challengeFor(env, p, u.email), code });
    expect(replay.statusCode).toBe(400);
    expect(replay.json().code).toBe('mfa_code_invalid');
    // An older code of the window is refused too (its step is not newer than the one used).
    const older = await verify(env, p, { challengeId: await challengeFor(env, p, u.email), code: codeAt(env, u.secret, -1) });
    expect(older.statusCode).toBe(400);
  });

  it('threat: one code sent twenty times at once opens exactly one session', async () => {
    const u = await enrolledUser(env, p);
    const code = codeAt(env, u.secret);
    const challenges = await Promise.all(Array.from({ length: 5 }, () => challengeFor(env, p, u.email)));
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => verify(env, p, { challengeId: challenges[i % 5], code })));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
  });

  it('threat: a challenge reused after it completed is refused', async () => {
    const u = await enrolledUser(env, p);
    const challengeId = await challengeFor(env, p, u.email);
    expect((await verify(env, p, { challengeId, code: codeAt(env, u.secret) })).statusCode).toBe(200);
    nextStep(env);
    const again = await verify(env, p, { challengeId, code: codeAt(env, u.secret) });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('mfa_challenge_invalid');
  });

  it('threat: a challenge used with another user\'s code (the attacker\'s own account) is refused', async () => {
    const victim = await enrolledUser(env, p);
    const attacker = await enrolledUser(env, p);
    const challengeId = await challengeFor(env, p, victim.email);
    const res = await verify(env, p, { challengeId, code: codeAt(env, attacker.secret) });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('mfa_code_invalid');
    const recovery = await verify(env, p, { challengeId, recoveryCode: attacker.recoveryCodes[0] });
    expect(recovery.statusCode).toBe(400);
  });

  it('threat: a challenge of one project is worthless in another', async () => {
    const u = await enrolledUser(env, p);
    const challengeId = await challengeFor(env, p, u.email);
    const { authProject } = await import('../auth/helpers.js');
    const other = await authProject(env);
    const res = await verify(env, other, { challengeId, code: codeAt(env, u.secret) });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('mfa_challenge_invalid');
  });

  it('a challenge expires after 5 minutes and dies after 5 tries', async () => {
    const u = await enrolledUser(env, p);
    const stale = await challengeFor(env, p, u.email);
    env.clock.advance(301_000);
    expect((await verify(env, p, { challengeId: stale, code: codeAt(env, u.secret) })).json().code).toBe('mfa_challenge_invalid');
    const challengeId = await challengeFor(env, p, u.email);
    for (let i = 0; i < 5; i++) expect((await verify(env, p, { challengeId, code: '000000' })).statusCode).toBe(400);
    const sixth = await verify(env, p, { challengeId, code: codeAt(env, u.secret) });
    expect(sixth.json().code).toBe('mfa_challenge_invalid');
  });

  it('threat: brute force of the 6-digit code is limited per account, across challenges and addresses', async () => {
    const u = await enrolledUser(env, p);
    let wrong = 0;
    for (let c = 0; c < 3; c++) {
      const challengeId = await challengeFor(env, p, u.email);
      for (let i = 0; i < 4; i++) {
        const res = await env.app.inject({
          method: 'POST', url: '/api/userAuth/mfa/verify', remoteAddress: `10.0.${c}.${i + 1}`, headers: p.pk, payload: { challengeId, code: String(100000 + wrong) },
        });
        if (res.statusCode === 400) wrong++;
        else expect(res.statusCode).toBe(429);
      }
    }
    expect(wrong).toBe(10);
    // Even the right code waits now: the account's budget is spent.
    const locked = await verify(env, p, { challengeId: await challengeFor(env, p, u.email), code: codeAt(env, u.secret) });
    expect(locked.statusCode).toBe(429);
    expect(locked.json().code).toBe('mfa_locked');
    expect(locked.headers['retry-after']).toBeDefined();
    env.clock.advance(15 * 60_000 + 1000);
    expect((await verify(env, p, { challengeId: await challengeFor(env, p, u.email), code: codeAt(env, u.secret) })).statusCode).toBe(200);
  });

  it('social-style first factors go through the same gate (login is refused tokens, not only password)', async () => {
    // The gate is one function for password and social sign-in (src/modules/mfa/challenge.ts);
    // the social callback's redirect is covered in test/modules/social/social-mfa.test.ts.
    const u = await enrolledUser(env, p);
    const res = await login(env, p, u.email);
    expect(res.json().data.mfaRequired).toBe(true);
  });
});

describe('recovery codes', () => {
  it('a recovery code completes a sign-in; threat: the same code used twice is refused', async () => {
    const u = await enrolledUser(env, p);
    const code = u.recoveryCodes[3]!;
    const res = await verify(env, p, { challengeId: await challengeFor(env, p, u.email), recoveryCode: code.toUpperCase() });
    expect(res.statusCode).toBe(200);
    expect(claimsOf(res.json().data.accessToken)).toMatchObject({ aal: 'aal2', amr: [{ method: 'pwd' }, { method: 'recovery' }] });
    const again = await verify(env, p, { challengeId: await challengeFor(env, p, u.email), recoveryCode: code });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('mfa_code_invalid');
  });

  it('threat: one recovery code sent concurrently works once', async () => {
    const u = await enrolledUser(env, p);
    const challenges = await Promise.all(Array.from({ length: 5 }, () => challengeFor(env, p, u.email)));
    const results = await Promise.all(challenges.map((challengeId) => verify(env, p, { challengeId, recoveryCode: u.recoveryCodes[0] })));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    const factors = await env.app.inject({ method: 'GET', url: '/api/userAuth/mfa/factors', headers: bearer(p, u.accessToken) });
    expect(factors.json().data.recoveryCodesLeft).toBe(9);
  });

  it('regenerating needs a fresh second factor and voids the old set', async () => {
    const u = await enrolledUser(env, p);
    const bare = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/recovery-codes', headers: bearer(p, u.accessToken), payload: {} });
    expect(bare.statusCode).toBe(403);
    expect(bare.json().code).toBe('mfa_code_required');
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/recovery-codes', headers: bearer(p, u.accessToken), payload: { code: codeAt(env, u.secret) } });
    expect(res.statusCode).toBe(200);
    const fresh: string[] = res.json().data.recoveryCodes;
    expect(fresh).toHaveLength(10);
    const old = await verify(env, p, { challengeId: await challengeFor(env, p, u.email), recoveryCode: u.recoveryCodes[1] });
    expect(old.statusCode).toBe(400);
    expect((await verify(env, p, { challengeId: await challengeFor(env, p, u.email), recoveryCode: fresh[0] })).statusCode).toBe(200);
  });
});

describe('removing the factor', () => {
  it('threat: a stolen access token alone (even aal2) cannot remove the factor', async () => {
    const u = await enrolledUser(env, p);
    expect(claimsOf(u.accessToken).aal).toBe('aal2');
    const res = await env.app.inject({ method: 'DELETE', url: '/api/userAuth/mfa/totp', headers: bearer(p, u.accessToken), payload: {} });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('mfa_code_required');
    const noBody = await env.app.inject({ method: 'DELETE', url: '/api/userAuth/mfa/totp', headers: bearer(p, u.accessToken) });
    expect(noBody.statusCode).toBe(400);
    expect((await login(env, p, u.email)).json().data.mfaRequired).toBe(true);
  });

  it('with a fresh code the factor, its recovery codes and aal2 of the sessions go; sign-in is one step again', async () => {
    const u = await enrolledUser(env, p);
    const res = await env.app.inject({ method: 'DELETE', url: '/api/userAuth/mfa/totp', headers: bearer(p, u.accessToken), payload: { code: codeAt(env, u.secret) } });
    expect(res.statusCode).toBe(200);
    const left = await env.ctx.db.admin.selectFrom('app_user_recovery_codes').select('code_hash').where('user_id', '=', u.userId).execute();
    expect(left).toHaveLength(0);
    const again = await login(env, p, u.email);
    expect(again.json().data.accessToken).toBeTruthy();
    const refreshed = await refresh(env, p, u.refreshToken);
    expect(claimsOf(refreshed.json().data.accessToken).aal).toBe('aal1');
  });
});

describe('step-up', () => {
  it('an aal1 session is raised to aal2 with a fresh code', async () => {
    const u = await enrolledUser(env, p);
    const refreshedBefore = await env.ctx.db.admin.updateTable('app_user_sessions').set({ aal: 'aal1' }).where('user_id', '=', u.userId).execute();
    expect(refreshedBefore).toBeDefined();
    const r = await refresh(env, p, u.refreshToken);
    const aal1 = r.json().data.accessToken;
    expect(claimsOf(aal1).aal).toBe('aal1');
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/step-up', headers: bearer(p, aal1), payload: { code: codeAt(env, u.secret) } });
    expect(res.statusCode).toBe(200);
    expect(claimsOf(res.json().data.accessToken)).toMatchObject({ aal: 'aal2', sid: claimsOf(aal1).sid });
  });
});
