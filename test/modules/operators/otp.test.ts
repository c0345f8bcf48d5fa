/**
 * Operator email verification and password reset by mailed 6-digit code, asked for only when
 * a real mail provider is configured (RESEND_API_KEY set here).
 */
import type { SystemMail } from '../../../src/context.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { captureMail, codeIn, cookiesOf, freshIp, login, register } from './helpers.js';

let env: TestEnv;
let mails: SystemMail[];

beforeAll(async () => {
  env = await createTestEnv({ RESEND_API_KEY: 're_platform_test_key' });
  mails = captureMail(env);
});
afterAll(() => env.close());

const post = (url: string, payload: object) => env.app.inject({ method: 'POST', url, remoteAddress: freshIp(), payload });
const wrongCode = (code: string) => String(((Number(code) - 100000 + 1) % 900000) + 100000);

describe('email verification', () => {
  it('a new operator starts unverified and cannot create projects', async () => {
    const res = await register(env, 'new@example.com');
    expect(res.json().data).toMatchObject({ verificationRequired: true, user: { isVerified: false } });
    const token = (await login(env, 'new@example.com')).json().data.token;
    const create = await env.app.inject({ method: 'POST', url: '/api/projects', headers: { authorization: `Bearer ${token}` }, payload: { name: 'p' } });
    expect(create.statusCode).toBe(403);
    expect(create.json().message).toMatch(/Email not verified/);
  });

  it('send-otp mails a code (hashed at rest); a resend within 60 s is 429 with Retry-After', async () => {
    const res = await post('/api/auth/send-otp', { email: 'NEW@example.com' });
    expect(res.statusCode).toBe(200);
    const mail = mails.at(-1)!;
    expect(mail).toMatchObject({ projectId: null, to: 'new@example.com', tag: 'operator.otp' });
    const stored = await env.ctx.db.admin.selectFrom('operator_otps').select('code_hash').executeTakeFirstOrThrow();
    expect(stored.code_hash).not.toContain(codeIn(mail));
    const again = await post('/api/auth/send-otp', { email: 'new@example.com' });
    expect(again.statusCode).toBe(429);
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('a wrong code says how many attempts remain; the right one verifies and signs in', async () => {
    const code = codeIn(mails.at(-1));
    const wrong = await post('/api/auth/verify-otp', { email: 'new@example.com', otp: wrongCode(code) });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().message).toBe('Incorrect OTP. 4 attempt(s) remaining.');
    const bad = await post('/api/auth/verify-otp', { email: 'new@example.com', otp: '12ab56' });
    expect(bad.statusCode).toBe(400);
    const ok = await post('/api/auth/verify-otp', { email: 'new@example.com', otp: code });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.user.isVerified).toBe(true);
    expect(cookiesOf(ok).accessToken).toBeTruthy();
    const reuse = await post('/api/auth/verify-otp', { email: 'new@example.com', otp: code });
    expect(reuse.json().message).toBe('No OTP found. Please request a new one.');
  });

  it('unknown and verified accounts get the same answer and no mail', async () => {
    const before = mails.length;
    const unknown = await post('/api/auth/send-otp', { email: 'ghost@example.com' });
    const verified = await post('/api/auth/send-otp', { email: 'new@example.com' });
    expect(unknown.json()).toEqual(verified.json());
    expect(mails.length).toBe(before);
    expect((await post('/api/auth/verify-otp', { email: 'ghost@example.com', otp: '123456' })).statusCode).toBe(400);
  });

  it('five wrong attempts lock the code (429); codes expire after 10 minutes', async () => {
    await register(env, 'lock@example.com');
    await post('/api/auth/send-otp', { email: 'lock@example.com' });
    const code = codeIn(mails.at(-1));
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await post('/api/auth/verify-otp', { email: 'lock@example.com', otp: wrongCode(code) })).statusCode);
    expect(statuses).toEqual([400, 400, 400, 400, 429]);
    // The per-email limit (5 per 10 minutes) now also applies; wait it out, then the code has expired too.
    env.clock.advance(11 * 60_000);
    await env.ctx.limits.reset('operator:otp-verify:lock@example.com');
    const late = await post('/api/auth/verify-otp', { email: 'lock@example.com', otp: code });
    expect(late.json().message).toBe('No OTP found. Please request a new one.');
  });
});

describe('password reset', () => {
  it('forgot-password answers the same for every email and mails a code only to real accounts', async () => {
    const before = mails.length;
    const ghost = await post('/api/auth/forgot-password', { email: 'ghost@example.com' });
    expect(ghost.statusCode).toBe(200);
    expect(mails.length).toBe(before);
    const real = await post('/api/auth/forgot-password', { email: 'new@example.com' });
    expect(real.json()).toEqual(ghost.json());
    expect(mails.length).toBe(before + 1);
    const within = await post('/api/auth/forgot-password', { email: 'new@example.com' });
    expect(within.statusCode).toBe(200);
    expect(mails.length).toBe(before + 1);
  });

  it('reset-password sets the new password and ends every session', async () => {
    const session = await login(env, 'new@example.com', 'long enough pw', { 'x-refresh-token-mode': 'header' });
    const refreshToken = session.json().data.refreshToken;
    const code = codeIn(mails.at(-1));
    const weak = await post('/api/auth/reset-password', { email: 'new@example.com', otp: code, newPassword: 'short' });
    expect(weak.statusCode).toBe(400);
    const res = await post('/api/auth/reset-password', { email: 'new@example.com', otp: code, newPassword: 'a fresh password' });
    expect(res.statusCode).toBe(200);
    expect(res.json().message).toMatch(/Password reset successfully/);
    expect((await post('/api/auth/refresh-token', { refreshToken })).statusCode).toBe(403);
    expect((await login(env, 'new@example.com', 'long enough pw')).statusCode).toBe(401);
    expect((await login(env, 'new@example.com', 'a fresh password')).statusCode).toBe(200);
  });
});
