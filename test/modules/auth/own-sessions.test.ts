/**
 * A user's own sessions (docs/auth.md "Your own sessions"): list them with device, address and
 * last use, revoke one or every other; never another user's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { bearer } from '../mfa/helpers.js';
import { authTestEnv, PASSWORD, refresh, signup } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ env, p } = await authTestEnv());
});
afterAll(() => env.close());

const CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const login = (email: string, ua: string, ip: string) =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: { ...p.pk, 'user-agent': ua, 'x-refresh-token-mode': 'header' }, remoteAddress: ip, payload: { email, password: PASSWORD } });
const list = async (token: string) => (await env.app.inject({ method: 'GET', url: '/api/userAuth/sessions', headers: bearer(p, token) })).json().data.sessions;

describe('own sessions', () => {
  it('lists device, address and last use, marks the current one; revokes one and then every other', async () => {
    const { body } = await signup(env, p);
    const email = body.data.user.email;
    const laptop = (await login(email, CHROME, '10.7.0.1')).json().data;
    const sdk = (await login(email, 'urbackend-sdk-js/0.4.2', '10.7.0.2')).json().data;
    const sessions = await list(laptop.accessToken);
    expect(sessions).toHaveLength(3);
    const mine = sessions.find((s: { current: boolean }) => s.current);
    expect(mine).toMatchObject({ device: 'Chrome 131 on macOS', ip: '10.7.0.1' });
    expect(sessions.find((s: { ip: string }) => s.ip === '10.7.0.2')).toMatchObject({ device: 'urbackend-sdk-js/0.4.2', current: false });
    expect(Date.parse(mine.lastUsedAt)).toBeGreaterThan(0);
    // Revoke the SDK session: its refresh token is dead, the others live.
    const sdkSession = sessions.find((s: { ip: string }) => s.ip === '10.7.0.2').id;
    const del = await env.app.inject({ method: 'DELETE', url: `/api/userAuth/sessions/${sdkSession}`, headers: bearer(p, laptop.accessToken) });
    expect(del.statusCode).toBe(200);
    expect((await refresh(env, p, sdk.refreshToken)).statusCode).toBe(403);
    expect(await list(laptop.accessToken)).toHaveLength(2);
    // Every other: only the laptop's session is left, and it still refreshes.
    const others = await env.app.inject({ method: 'DELETE', url: '/api/userAuth/sessions/others', headers: bearer(p, laptop.accessToken) });
    expect(others.json().data.revoked).toBe(1);
    expect((await refresh(env, p, body.data.refreshToken)).statusCode).toBe(403);
    const next = await refresh(env, p, laptop.refreshToken);
    expect(next.statusCode).toBe(200);
    const left = await list(next.json().data.accessToken);
    expect(left).toHaveLength(1);
    expect(left[0].current).toBe(true);
  });

  it("another user's session cannot be listed or revoked (404, and it keeps working)", async () => {
    const alice = (await signup(env, p)).body.data;
    const bob = (await signup(env, p)).body.data;
    const bobSession = (await list(bob.accessToken))[0].id;
    expect((await list(alice.accessToken)).map((s: { id: string }) => s.id)).not.toContain(bobSession);
    const res = await env.app.inject({ method: 'DELETE', url: `/api/userAuth/sessions/${bobSession}`, headers: bearer(p, alice.accessToken) });
    expect([res.statusCode, res.json().code]).toEqual([404, 'session_not_found']);
    expect((await refresh(env, p, bob.refreshToken)).statusCode).toBe(200);
    expect((await env.app.inject({ method: 'GET', url: '/api/userAuth/sessions', headers: p.pk })).statusCode).toBe(401);
  });

  it('a session id that is no session id is not found (404), not an internal error', async () => {
    const alice = (await signup(env, p)).body.data;
    for (const id of ['not-a-session', "x' OR 1=1 --", 'A'.repeat(32)]) {
      const res = await env.app.inject({ method: 'DELETE', url: `/api/userAuth/sessions/${encodeURIComponent(id)}`, headers: bearer(p, alice.accessToken) });
      expect([res.statusCode, res.json().code]).toEqual([404, 'session_not_found']);
    }
  });
});
