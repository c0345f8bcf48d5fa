/** Operator accounts: register, login, me, and the bad inputs around them. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { cookiesOf, freshIp, login, register } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

describe('POST /api/auth/register', () => {
  it('creates a verified operator (no mail provider), lower-casing the email, hashing with argon2id', async () => {
    const res = await register(env, 'Ada@Example.COM');
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.success).toBe(true);
    expect(body.data.user).toMatchObject({ email: 'ada@example.com', name: 'Ada', plan: 'free', isVerified: true, isAdmin: false });
    expect(body.data.verificationRequired).toBe(false);
    const row = await env.ctx.db.admin.selectFrom('operators').selectAll().where('email', '=', 'ada@example.com').executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect(JSON.stringify(body)).not.toContain('argon2');
  });

  it('rejects a duplicate email in any case with 409', async () => {
    const res = await register(env, 'ADA@example.com');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ success: false, message: 'Email already exists', error: 'Email already exists' });
  });

  it('rejects bad inputs with 400: short password, bad email, wrong types, missing fields', async () => {
    const cases = [
      { email: 'x@example.com', password: 'short' },
      { email: 'not-an-email', password: 'long enough pw' },
      { email: ['x@example.com'], password: { a: 1 } },
      { password: 'long enough pw' },
    ];
    for (const payload of cases) {
      const res = await env.app.inject({ method: 'POST', url: '/api/auth/register', remoteAddress: freshIp(), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().success).toBe(false);
    }
  });

  it('answers malformed JSON with 400 and an oversized body with 413', async () => {
    const bad = await env.app.inject({
      method: 'POST', url: '/api/auth/register', remoteAddress: freshIp(),
      headers: { 'content-type': 'application/json' }, payload: '{"email": "a@b.co",',
    });
    expect(bad.statusCode).toBe(400);
    const big = await env.app.inject({
      method: 'POST', url: '/api/auth/register', remoteAddress: freshIp(),
      headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(big.statusCode).toBe(413);
  });
});

describe('POST /api/auth/login', () => {
  it('returns a token, the user and HttpOnly session cookies plus a readable CSRF cookie', async () => {
    const res = await login(env, 'ADA@example.com');
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(data).toMatchObject({ expiresIn: '15m', user: { email: 'ada@example.com', isVerified: true, isAdmin: false, plan: 'free' } });
    expect(data.token).toBe(data.accessToken);
    expect(data.refreshToken).toBeUndefined();
    const byName = Object.fromEntries(res.cookies.map((c) => [c.name, c]));
    expect(byName.accessToken).toMatchObject({ httpOnly: true, path: '/', maxAge: 900, sameSite: 'Lax' });
    expect(byName.refreshToken).toMatchObject({ httpOnly: true, path: '/api/auth' });
    expect(byName.csrfToken?.httpOnly).toBeFalsy();
    const stored = await env.ctx.db.admin.selectFrom('operator_sessions').select('token_hash').execute();
    expect(stored.map((s) => s.token_hash)).not.toContain(byName.refreshToken!.value);
  });

  it('gives the refresh token in the body and header to scripts that ask for header mode', async () => {
    const res = await login(env, 'ada@example.com', 'long enough pw', { 'x-refresh-token-mode': 'header' });
    expect(res.json().data.refreshToken).toBe(cookiesOf(res).refreshToken);
    expect(res.headers['x-refresh-token']).toBe(cookiesOf(res).refreshToken);
  });

  it('answers a wrong password and an unknown email with the same 401', async () => {
    const wrong = await login(env, 'ada@example.com', 'wrong password');
    const unknown = await login(env, 'nobody@example.com', 'wrong password');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json().message).toBe('Invalid email or password');
    expect(unknown.json()).toEqual(wrong.json());
    expect(unknown.cookies).toEqual([]);
  });

  it('rejects a missing password with 400', async () => {
    const res = await env.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: freshIp(), payload: { email: 'ada@example.com' } });
    expect(res.statusCode).toBe(400);
  });
});

describe('GET /api/auth/me', () => {
  it('works with the Bearer token and with the cookie', async () => {
    const res = await login(env, 'ada@example.com');
    const token = res.json().data.token as string;
    const bearer = await env.app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `bearer ${token}` } });
    expect(bearer.statusCode).toBe(200);
    expect(bearer.json().data.user.email).toBe('ada@example.com');
    const cookie = await env.app.inject({ method: 'GET', url: '/api/auth/me', cookies: { accessToken: token } });
    expect(cookie.statusCode).toBe(200);
  });

  it('rejects a missing, forged or expired token with 401', async () => {
    const token = (await login(env, 'ada@example.com')).json().data.token as string;
    const none = await env.app.inject({ method: 'GET', url: '/api/auth/me' });
    expect(none.statusCode).toBe(401);
    const forged = await env.app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${token}x` } });
    expect(forged.statusCode).toBe(401);
    env.clock.advance(16 * 60_000);
    const expired = await env.app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });
    expect(expired.statusCode).toBe(401);
  });

  it('GET /api/auth/csrf-token sets and returns the double-submit token, stable for the browser', async () => {
    const first = await env.app.inject({ method: 'GET', url: '/api/auth/csrf-token' });
    const token = first.json().data.csrfToken as string;
    expect(first.json().csrfToken).toBe(token);
    expect(cookiesOf(first).csrfToken).toBe(token);
    const again = await env.app.inject({ method: 'GET', url: '/api/auth/csrf-token', cookies: { csrfToken: token } });
    expect(again.json().data.csrfToken).toBe(token);
  });
});
