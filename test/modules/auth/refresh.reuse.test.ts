/**
 * Threat: a stolen or replayed refresh token. Tokens rotate on every use; presenting a used
 * one revokes the whole family (attacker and victim both lose the session). Also the other
 * statuses of docs/wire-compatibility.md §2.15, cookie mode, logout, and expiry via the fake clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authProject, authTestEnv, cookieOf, refresh, signup } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ env, p } = await authTestEnv());
});
afterAll(() => env.close());

const me = (token: string) => env.app.inject({ method: 'GET', url: '/api/userAuth/me', headers: { ...p.pk, authorization: `Bearer ${token}` } });

describe('refresh-token rotation', () => {
  it('rotates: new access and refresh tokens, in body, header and cookie', async () => {
    const { body } = await signup(env, p);
    env.clock.advance(1000);
    const res = await refresh(env, p, body.data.refreshToken);
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(res.json().message).toBe('Token refreshed successfully');
    expect(data.accessToken).toBe(data.token);
    expect(data.expiresIn).toBe('15m');
    expect(data.refreshToken).not.toBe(body.data.refreshToken);
    expect(res.headers['x-refresh-token']).toBe(data.refreshToken);
    expect(cookieOf(res)?.value).toBe(data.refreshToken);
    expect((await me(data.accessToken)).statusCode).toBe(200);
  });

  it('reuse of a rotated token → 403 and the whole family is revoked', async () => {
    const { body } = await signup(env, p);
    const first = body.data.refreshToken;
    const second = (await refresh(env, p, first)).json().data.refreshToken;
    const replay = await refresh(env, p, first);
    expect(replay.statusCode).toBe(403);
    expect(replay.json().message).toBe('Refresh token is invalid or already used');
    const afterTheft = await refresh(env, p, second);
    expect(afterTheft.statusCode).toBe(403);
    const rows = await env.ctx.db.admin.selectFrom('app_user_sessions').select(['revoked_at']).where('user_id', '=', body.data.user._id).execute();
    expect(rows.length).toBe(2);
    expect(rows.every((r) => r.revoked_at !== null)).toBe(true);
  });

  it('401 for missing, malformed and unknown tokens; the cookie is cleared', async () => {
    const missing = await env.app.inject({ method: 'POST', url: '/api/userAuth/refresh-token', headers: p.pk });
    expect(missing.statusCode).toBe(401);
    expect(missing.json().message).toBe('Refresh token missing');
    expect(cookieOf(missing)?.value).toBe('');
    const bad = await refresh(env, p, 'garbage');
    expect([bad.statusCode, bad.json().message]).toEqual([401, 'Invalid refresh token format']);
    const unknown = await refresh(env, p, `${'a'.repeat(32)}.${'B'.repeat(43)}`);
    expect([unknown.statusCode, unknown.json().message]).toEqual([401, 'Refresh session not found']);
  });

  it("403 for another project's token, without clearing the cookie or revoking it", async () => {
    const other = await authProject(env);
    const { body } = await signup(env, other);
    const res = await refresh(env, p, body.data.refreshToken);
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toBe('Refresh token does not belong to this project');
    expect(cookieOf(res)).toBeUndefined();
    expect((await refresh(env, other, body.data.refreshToken)).statusCode).toBe(200);
  });

  it('cookie mode: the refreshToken cookie alone rotates the session', async () => {
    const { res: s } = await signup(env, p, {}, false);
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/refresh-token', headers: p.pk, cookies: { refreshToken: cookieOf(s)!.value } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.refreshToken).toBeUndefined();
    expect(cookieOf(res)?.value).toMatch(/\./);
  });
});

describe('expiry (fake clock)', () => {
  it('an expired access token is 401 (so SDKs refresh and retry)', async () => {
    const { body } = await signup(env, p);
    expect((await me(body.data.accessToken)).statusCode).toBe(200);
    env.clock.advance(15 * 60 * 1000 + 1000);
    const res = await me(body.data.accessToken);
    expect(res.statusCode).toBe(401);
    const fresh = await refresh(env, p, body.data.refreshToken);
    expect(fresh.statusCode).toBe(200);
    expect((await me(fresh.json().data.accessToken)).statusCode).toBe(200);
  });

  it('a refresh token past its 7-day lifetime is refused (403) and its family revoked', async () => {
    const { body } = await signup(env, p);
    env.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    const res = await refresh(env, p, body.data.refreshToken);
    expect(res.statusCode).toBe(403);
  });
});

describe('logout', () => {
  it('revokes the presented session and clears the cookie', async () => {
    const { body } = await signup(env, p);
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/logout', headers: { ...p.pk, 'x-refresh-token': body.data.refreshToken } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true, message: 'Logged out successfully' });
    expect(cookieOf(res)?.value).toBe('');
    expect((await refresh(env, p, body.data.refreshToken)).statusCode).toBe(403);
  });

  it("another project's token is 403 and stays live there; a wrong secret is ignored (nothing revoked)", async () => {
    const other = await authProject(env);
    const { body: theirs } = await signup(env, other);
    const foreign = await env.app.inject({ method: 'POST', url: '/api/userAuth/logout', headers: { ...p.pk, 'x-refresh-token': theirs.data.refreshToken } });
    expect([foreign.statusCode, foreign.json().message]).toEqual([403, 'Refresh token does not belong to this project']);
    expect((await refresh(env, other, theirs.data.refreshToken)).statusCode).toBe(200);
    const { body } = await signup(env, p);
    const [id] = body.data.refreshToken.split('.');
    const forged = await env.app.inject({ method: 'POST', url: '/api/userAuth/logout', headers: { ...p.pk, 'x-refresh-token': `${id}.${'A'.repeat(43)}` } });
    expect(forged.statusCode).toBe(200);
    expect((await refresh(env, p, body.data.refreshToken)).statusCode).toBe(200);
  });

  it('200 without any token', async () => {
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/logout', headers: p.pk });
    expect(res.statusCode).toBe(200);
  });
});
