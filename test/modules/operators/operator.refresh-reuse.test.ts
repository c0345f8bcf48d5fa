/**
 * Threat: a stolen dashboard refresh token. Tokens rotate on every use; presenting a used one
 * revokes its whole family, so the thief and the victim are both signed out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { cookiesOf, freshIp, login, register } from './helpers.js';

let env: TestEnv;
const email = 'rot@example.com';

beforeAll(async () => {
  env = await createTestEnv();
  await register(env, email);
});
afterAll(() => env.close());

const refresh = (payload: object, headers: Record<string, string> = {}, cookies: Record<string, string> = {}) =>
  env.app.inject({ method: 'POST', url: '/api/auth/refresh-token', remoteAddress: freshIp(), payload, headers, cookies });

async function startSession() {
  const res = await login(env, email, 'long enough pw', { 'x-refresh-token-mode': 'header' });
  return res.json().data.refreshToken as string;
}

describe('POST /api/auth/refresh-token', () => {
  it('rotates: a new access and refresh token, the old refresh token spent', async () => {
    const first = await startSession();
    const res = await refresh({ refreshToken: first });
    expect(res.statusCode).toBe(200);
    const second = cookiesOf(res).refreshToken!;
    expect(second).toBeTruthy();
    expect(second).not.toBe(first);
    expect(res.json().data.user.email).toBe(email);
    const me = await env.app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${res.json().data.token}` } });
    expect(me.statusCode).toBe(200);
  });

  it('reuse of a spent token answers 403 and revokes the whole family', async () => {
    const first = await startSession();
    const second = cookiesOf(await refresh({ refreshToken: first })).refreshToken!;
    const reuse = await refresh({ refreshToken: first });
    expect(reuse.statusCode).toBe(403);
    expect(reuse.json().message).toBe('Invalid refresh token');
    const afterTheft = await refresh({ refreshToken: second });
    expect(afterTheft.statusCode).toBe(403);
  });

  it('takes the x-refresh-token header and answers with the new token in body and header', async () => {
    const first = await startSession();
    const res = await refresh({}, { 'x-refresh-token': first });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.refreshToken).toBe(res.headers['x-refresh-token']);
  });

  it('401 without a token, 403 for an unknown or expired one', async () => {
    expect((await refresh({})).statusCode).toBe(401);
    expect((await refresh({ refreshToken: 'nope' })).statusCode).toBe(403);
    const token = await startSession();
    env.clock.advance(8 * 24 * 3600_000);
    const expired = await refresh({ refreshToken: token });
    expect(expired.statusCode).toBe(403);
    expect(expired.json().message).toBe('Invalid or expired refresh token');
  });
});

describe('logout and password change end sessions', () => {
  it('logout revokes the presented session and clears the cookies', async () => {
    const token = await startSession();
    const res = await env.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refreshToken: token } });
    expect(res.statusCode).toBe(200);
    expect(res.json().message).toBe('Logged out successfully');
    expect(res.cookies.find((c) => c.name === 'refreshToken')?.value).toBe('');
    expect((await refresh({ refreshToken: token })).statusCode).toBe(403);
    const again = await env.app.inject({ method: 'POST', url: '/api/auth/logout' });
    expect(again.statusCode).toBe(200);
  });

  it('change-password needs the current password, then ends every other session', async () => {
    const other = await startSession();
    const mine = await login(env, email);
    const auth = { authorization: `Bearer ${mine.json().data.token}` };
    const wrong = await env.app.inject({ method: 'PUT', url: '/api/auth/change-password', headers: auth, payload: { currentPassword: 'nope nope', newPassword: 'brand new pw' } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().message).toBe('Incorrect current password');
    const weak = await env.app.inject({ method: 'PUT', url: '/api/auth/change-password', headers: auth, payload: { currentPassword: 'long enough pw', newPassword: 'short' } });
    expect(weak.statusCode).toBe(400);
    const res = await env.app.inject({ method: 'PUT', url: '/api/auth/change-password', headers: auth, payload: { currentPassword: 'long enough pw', newPassword: 'brand new pw' } });
    expect(res.statusCode).toBe(200);
    expect(cookiesOf(res).refreshToken).toBeTruthy();
    expect((await refresh({ refreshToken: other })).statusCode).toBe(403);
    expect((await login(env, email)).statusCode).toBe(401);
    expect((await login(env, email, 'brand new pw')).statusCode).toBe(200);
  });
});
