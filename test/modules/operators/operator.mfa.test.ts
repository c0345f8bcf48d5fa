/**
 * Operators' second factor: enrolment with a QR code, two-step sign-in, replay and brute force
 * refused, removal only with a fresh code, aal2 demanded for key rotation, project deletion and
 * export once the operator has a factor, and the admin's switch requiring one of everybody.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../../src/lib/identity/totp.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestOperator } from '../../helpers/fixtures.js';
import { captureMail, codeIn } from './helpers.js';

let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv({ ADMIN_EMAIL: 'boss@example.com', RATE_LIMIT_SCALE: '100' });
});
afterAll(() => env.close());

const code = (secret: string, steps = 0) => totpCode(secret, new Date(env.clock.now().getTime() + steps * 30_000));
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const login = (op: TestOperator) => env.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: op.email, password: op.password } });
const verify = (payload: object) => env.app.inject({ method: 'POST', url: '/api/auth/mfa/verify', payload });

async function enrolled(opts: { email?: string } = {}) {
  const op = await makeOperator(env.ctx, opts);
  const start = await env.app.inject({ method: 'POST', url: '/api/auth/mfa/totp/enroll', headers: op.auth });
  expect(start.statusCode).toBe(200);
  const { secret, qrCode, otpauthUri } = start.json().data;
  expect(qrCode).toMatch(/^data:image\/svg\+xml;base64,/);
  expect(otpauthUri).toContain('otpauth://totp/Plinth:');
  const confirm = await env.app.inject({ method: 'POST', url: '/api/auth/mfa/totp/confirm', headers: op.auth, payload: { code: code(secret) } });
  expect(confirm.statusCode).toBe(200);
  env.clock.advance(30_000);
  return { op, secret, recoveryCodes: confirm.json().data.recoveryCodes as string[], aal2: confirm.json().data.accessToken as string };
}

describe('operator two-step sign-in', () => {
  it('the password gives a challenge (no session, no cookie); the code gives an aal2 session', async () => {
    const { op, secret, recoveryCodes, aal2 } = await enrolled();
    expect(recoveryCodes).toHaveLength(10);
    expect(decodeJwt(aal2)).toMatchObject({ aal: 'aal2' });
    const first = await login(op);
    expect(first.statusCode).toBe(200);
    expect(first.json().data).toMatchObject({ mfaRequired: true, methods: ['totp', 'recovery_code'] });
    expect(first.json().data.token).toBeUndefined();
    expect(first.cookies.find((c) => c.name === 'accessToken')).toBeUndefined();
    const res = await verify({ challengeId: first.json().data.challengeId, code: code(secret) });
    expect(res.statusCode).toBe(200);
    expect(decodeJwt(res.json().data.token)).toMatchObject({ aal: 'aal2', amr: [{ method: 'pwd' }, { method: 'totp' }] });
    // Threat: the same code again, on a new challenge.
    const again = await verify({ challengeId: (await login(op)).json().data.challengeId, code: code(secret) });
    expect(again.json().code).toBe('mfa_code_invalid');
  });

  it('threat: brute force of an operator code is limited per account', async () => {
    const { op, secret } = await enrolled();
    let wrong = 0;
    for (let c = 0; c < 3; c++) {
      const challengeId = (await login(op)).json().data.challengeId;
      for (let i = 0; i < 4; i++) if ((await verify({ challengeId, code: String(200000 + wrong) })).statusCode === 400) wrong++;
    }
    expect(wrong).toBe(10);
    const locked = await verify({ challengeId: (await login(op)).json().data.challengeId, code: code(secret) });
    expect(locked.json().code).toBe('mfa_locked');
  });

  it('threat: removing the factor with only a stolen session is refused; a recovery code works once', async () => {
    const { op, recoveryCodes, aal2 } = await enrolled();
    const bare = await env.app.inject({ method: 'DELETE', url: '/api/auth/mfa/totp', headers: bearer(aal2), payload: {} });
    expect(bare.json().code).toBe('mfa_code_required');
    const used = await verify({ challengeId: (await login(op)).json().data.challengeId, recoveryCode: recoveryCodes[0] });
    expect(used.statusCode).toBe(200);
    expect((await verify({ challengeId: (await login(op)).json().data.challengeId, recoveryCode: recoveryCodes[0] })).json().code).toBe('mfa_code_invalid');
    const removed = await env.app.inject({ method: 'DELETE', url: '/api/auth/mfa/totp', headers: bearer(aal2), payload: { recoveryCode: recoveryCodes[1] } });
    expect(removed.statusCode).toBe(200);
    expect((await login(op)).json().data.token).toBeTruthy();
  });
});

describe('other session-issuing routes respect the second factor', () => {
  it('threat: a stolen mailbox bypasses the operator\'s second factor (verify-otp answers the challenge, no session)', async () => {
    const { op, secret } = await enrolled();
    await env.ctx.db.admin.updateTable('operators').set({ is_verified: false }).where('id', '=', op.id).execute();
    const mails = captureMail(env);
    expect((await env.app.inject({ method: 'POST', url: '/api/auth/send-otp', payload: { email: op.email } })).statusCode).toBe(200);
    const res = await env.app.inject({ method: 'POST', url: '/api/auth/verify-otp', payload: { email: op.email, otp: codeIn(mails.at(-1)) } });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ mfaRequired: true, methods: ['totp', 'recovery_code'] });
    expect(data.token).toBeUndefined();
    expect(res.cookies.map((c) => c.name)).not.toContain('accessToken');
    const row = await env.ctx.db.admin.selectFrom('operators').select('is_verified').where('id', '=', op.id).executeTakeFirstOrThrow();
    expect(row.is_verified).toBe(true);
    const done = await verify({ challengeId: data.challengeId, code: code(secret) });
    expect(done.statusCode).toBe(200);
    const claims = decodeJwt(done.json().data.token) as { aal: string; amr: Array<{ method: string }> };
    expect(claims.aal).toBe('aal2');
    expect(claims.amr.map((e) => e.method)).toEqual(['otp', 'totp']);
  });

  it('threat: a stolen password-only session of an operator with a second factor changes the password (403 mfa_required); an aal2 change keeps aal2', async () => {
    const { op, aal2 } = await enrolled();
    const payload = { currentPassword: op.password, newPassword: 'a brand new password' };
    const refused = await env.app.inject({ method: 'PUT', url: '/api/auth/change-password', headers: op.auth, payload });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('mfa_required');
    const res = await env.app.inject({ method: 'PUT', url: '/api/auth/change-password', headers: bearer(aal2), payload });
    expect(res.statusCode).toBe(200);
    const claims = decodeJwt(res.json().data.token) as { aal: string; amr: Array<{ method: string }> };
    expect(claims.aal).toBe('aal2');
    expect(claims.amr.map((e) => e.method)).toEqual(['totp', 'pwd']);
    // The new session can still do what aal2 allows (key rotation needs it).
    const p = await makeProject(env.ctx, op);
    const rotate = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/api-key`, headers: bearer(res.json().data.token), payload: { keyType: 'secret' } });
    expect(rotate.statusCode).toBe(200);
  });
});

describe('aal2 for dangerous operations', () => {
  it('threat: an aal1 session of an operator with a factor cannot rotate keys, delete or export a project', async () => {
    const { op, aal2 } = await enrolled();
    const project = await makeProject(env.ctx, op);
    // op.auth is a password-only (aal1) token, as a stolen session would be.
    const rotate = await env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/api-key`, headers: op.auth, payload: { keyType: 'secret' } });
    expect(rotate.statusCode).toBe(403);
    expect(rotate.json().code).toBe('mfa_required');
    const exported = await env.app.inject({ method: 'GET', url: `/api/projects/${project.id}/export`, headers: op.auth });
    expect(exported.json().code).toBe('mfa_required');
    const deleted = await env.app.inject({ method: 'DELETE', url: `/api/projects/${project.id}`, headers: op.auth });
    expect(deleted.json().code).toBe('mfa_required');
    expect((await env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/api-key`, headers: bearer(aal2), payload: { keyType: 'secret' } })).statusCode).toBe(200);
    expect((await env.app.inject({ method: 'DELETE', url: `/api/projects/${project.id}`, headers: bearer(aal2) })).statusCode).toBe(200);
  });

  it('an operator without a factor keeps rotating keys as before', async () => {
    const op = await makeOperator(env.ctx);
    const project = await makeProject(env.ctx, op);
    expect((await env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/api-key`, headers: op.auth, payload: { keyType: 'secret' } })).statusCode).toBe(200);
  });
});

describe('the admin requires a second factor of every operator', () => {
  it('operators without one get mfa_enrollment_required except on enrolment; the switch is admin-only', async () => {
    const admin = (await enrolled({ email: 'boss@example.com' }));
    const member = await makeOperator(env.ctx);
    expect((await env.app.inject({ method: 'PUT', url: '/api/admin/settings/operator-mfa', headers: member.auth, payload: { required: true } })).statusCode).toBe(403);
    const set = await env.app.inject({ method: 'PUT', url: '/api/admin/settings/operator-mfa', headers: bearer(admin.aal2), payload: { required: true } });
    expect(set.statusCode).toBe(200);
    expect(env.logs.some((l) => l.includes('operator.mfa.required'))).toBe(true);
    const refused = await env.app.inject({ method: 'GET', url: '/api/projects', headers: member.auth });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('mfa_enrollment_required');
    expect((await env.app.inject({ method: 'GET', url: '/api/auth/me', headers: member.auth })).statusCode).toBe(200);
    expect((await env.app.inject({ method: 'POST', url: '/api/auth/mfa/totp/enroll', headers: member.auth })).statusCode).toBe(200);
    expect((await env.app.inject({ method: 'GET', url: '/api/projects', headers: bearer(admin.aal2) })).statusCode).toBe(200);
    await env.app.inject({ method: 'PUT', url: '/api/admin/settings/operator-mfa', headers: bearer(admin.aal2), payload: { required: false } });
    expect((await env.app.inject({ method: 'GET', url: '/api/projects', headers: member.auth })).statusCode).toBe(200);
  });
});
