/**
 * Threat: admin by email alone. With mail configured (so operators must verify their email),
 * someone registers ADMIN_EMAIL before its owner, never verifies it, and used to get the admin
 * routes. Admin rights now need the verified email; the real owner takes the account over by
 * password reset, which verifies it, revokes the sessions and kills the squatter's access
 * tokens (which must not turn into admin tokens once the email is verified).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SystemMail } from '../../../src/context.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { captureMail, codeIn, freshIp, login, register } from './helpers.js';

const ADMIN = 'boss@example.com';
let env: TestEnv;
let mail: SystemMail[];

beforeAll(async () => {
  env = await createTestEnv({ ADMIN_EMAIL: ADMIN, RESEND_API_KEY: 're_platform_test_key' });
  mail = captureMail(env);
});
afterAll(() => env.close());

const asBearer = (token: string) => ({ authorization: `Bearer ${token}` });
const adminList = (token: string) => env.app.inject({ method: 'GET', url: '/api/admin/operators', headers: asBearer(token) });
const me = (token: string) => env.app.inject({ method: 'GET', url: '/api/auth/me', headers: asBearer(token) });

describe('ADMIN_EMAIL registered by someone else, unverified', () => {
  it('gives no admin rights', async () => {
    const reg = await register(env, ADMIN, 'squatter password');
    expect(reg.statusCode).toBe(201);
    expect(reg.json().data.user).toMatchObject({ isVerified: false, isAdmin: false });
    const res = await login(env, ADMIN, 'squatter password');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user.isAdmin).toBe(false);
    const squatterToken = res.json().data.token;
    const list = await adminList(squatterToken);
    expect(list.statusCode).toBe(403);
    expect((await me(squatterToken)).json().data.user.isAdmin).toBe(false);
  });

  it('the unverified ADMIN_EMAIL operator is told to verify its email, not "Admin only"', async () => {
    const token = (await login(env, ADMIN, 'squatter password')).json().data.token;
    const list = await adminList(token);
    expect(list.statusCode).toBe(403);
    expect(list.json()).toMatchObject({ success: false, code: 'admin_email_not_verified' });
    expect(list.json().message).toMatch(/verif/i);
    expect(list.json().message).not.toMatch(/Admin only/);
  });

  it('any other operator is still told "Admin only"', async () => {
    expect((await register(env, 'someone@example.com', 'someone password')).statusCode).toBe(201);
    const token = (await login(env, 'someone@example.com', 'someone password')).json().data.token;
    const list = await adminList(token);
    expect([list.statusCode, list.json().code, list.json().message]).toEqual([403, 'admin_only', 'Access denied. Admin only.']);
  });

  it("the owner resets the password by mail: the account is verified and admin, the squatter's tokens are dead", async () => {
    const squatterToken = (await login(env, ADMIN, 'squatter password')).json().data.token;
    env.clock.advance(2000); // the reset happens in a later second than the squatter's login
    const forgot = await env.app.inject({ method: 'POST', url: '/api/auth/forgot-password', remoteAddress: freshIp(), payload: { email: ADMIN } });
    expect(forgot.statusCode).toBe(200);
    const otp = codeIn([...mail].reverse().find((m) => m.to === ADMIN));
    const reset = await env.app.inject({
      method: 'POST', url: '/api/auth/reset-password', remoteAddress: freshIp(), payload: { email: ADMIN, otp, newPassword: 'the owner password' },
    });
    expect(reset.statusCode).toBe(200);

    expect((await adminList(squatterToken)).statusCode).toBe(401);
    expect((await me(squatterToken)).statusCode).toBe(401);
    expect((await login(env, ADMIN, 'squatter password')).statusCode).toBe(401);

    const owner = await login(env, ADMIN, 'the owner password');
    expect(owner.json().data.user).toMatchObject({ isVerified: true, isAdmin: true });
    expect((await adminList(owner.json().data.token)).statusCode).toBe(200);
  });
});
