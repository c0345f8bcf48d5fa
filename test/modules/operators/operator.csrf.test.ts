/**
 * Threat: cross-site request forgery against a signed-in operator's browser. Mutations
 * authenticated by the accessToken cookie need x-csrf-token == csrfToken cookie; Bearer
 * requests cannot be forged cross-site and need none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { cookiesOf, freshIp, login, register } from './helpers.js';

let env: TestEnv;
let cookies: Record<string, string>;
let token: string;

beforeAll(async () => {
  env = await createTestEnv();
  await register(env, 'csrf@example.com');
  const res = await login(env, 'csrf@example.com');
  cookies = cookiesOf(res);
  token = res.json().data.token;
});
afterAll(() => env.close());

const create = (headers: Record<string, string>, cookieJar: Record<string, string> = {}) =>
  env.app.inject({ method: 'POST', url: '/api/projects', headers, cookies: cookieJar, payload: { name: 'p' } });

describe('CSRF on cookie-authenticated dashboard mutations', () => {
  it('rejects a cookie-authenticated POST without the header (403)', async () => {
    const res = await create({}, { accessToken: cookies.accessToken!, csrfToken: cookies.csrfToken! });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toMatch(/CSRF token is invalid/);
  });

  it('rejects a header that does not match the cookie (403)', async () => {
    const res = await create({ 'x-csrf-token': 'forged-value-0123456789' }, { accessToken: cookies.accessToken!, csrfToken: cookies.csrfToken! });
    expect(res.statusCode).toBe(403);
  });

  it('accepts the cookie with the matching header', async () => {
    const res = await create({ 'x-csrf-token': cookies.csrfToken! }, { accessToken: cookies.accessToken!, csrfToken: cookies.csrfToken! });
    expect(res.statusCode).toBe(201);
  });

  it('accepts a Bearer request without any CSRF token', async () => {
    const res = await create({ authorization: `Bearer ${token}` });
    expect(res.statusCode).toBe(201);
  });

  it('reads need no CSRF token', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/projects', cookies: { accessToken: cookies.accessToken! } });
    expect(res.statusCode).toBe(200);
  });

  it('a cookie-carried refresh token also needs the header', async () => {
    const jar = { refreshToken: cookies.refreshToken!, csrfToken: cookies.csrfToken! };
    const bare = await env.app.inject({ method: 'POST', url: '/api/auth/refresh-token', remoteAddress: freshIp(), cookies: jar });
    expect(bare.statusCode).toBe(403);
    const ok = await env.app.inject({ method: 'POST', url: '/api/auth/refresh-token', remoteAddress: freshIp(), cookies: jar, headers: { 'x-csrf-token': cookies.csrfToken! } });
    expect(ok.statusCode).toBe(200);
  });
});
