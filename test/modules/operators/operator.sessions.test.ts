/**
 * An operator's own sessions (docs/operators-and-projects.md "Your sessions"): listed with the
 * current one flagged, one revoked or every other; a revoked session's access token fails at
 * its next request (not only its refresh token), and so does a logged-out one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { freshIp, login, register } from './helpers.js';

let env: TestEnv;
const email = 'sessions@example.com';
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.1; rv:133.0) Gecko/20100101 Firefox/133.0';

beforeAll(async () => {
  env = await createTestEnv();
  await register(env, email);
  await register(env, 'other@example.com');
});
afterAll(() => env.close());

async function signIn(ua: string, who = email) {
  const res = await login(env, who, 'long enough pw', { 'user-agent': ua, 'x-refresh-token-mode': 'header' });
  expect(res.statusCode).toBe(200);
  const { token, refreshToken } = res.json().data as { token: string; refreshToken: string };
  return { auth: { authorization: `Bearer ${token}` }, refreshToken };
}

const list = (auth: Record<string, string>) => env.app.inject({ method: 'GET', url: '/api/auth/sessions', headers: auth });
const me = (auth: Record<string, string>) => env.app.inject({ method: 'GET', url: '/api/auth/me', headers: auth });
const refresh = (refreshToken: string) => env.app.inject({ method: 'POST', url: '/api/auth/refresh-token', remoteAddress: freshIp(), payload: { refreshToken } });

interface Listed { id: string; current: boolean; device: string | null; ip: string | null; methods: string[]; aal: string }

describe('operator sessions', () => {
  it('lists the live sessions with device, address and method, the current one flagged, no token', async () => {
    const a = await signIn(CHROME);
    const b = await signIn(FIREFOX);
    const res = await list(a.auth);
    expect(res.statusCode).toBe(200);
    const sessions = res.json().data.sessions as Listed[];
    const current = sessions.filter((s) => s.current);
    expect(current).toHaveLength(1);
    expect(current[0]!.device).toBe('Chrome 131 on Linux');
    expect(current[0]!.methods).toEqual(['pwd']);
    expect(current[0]!.ip).toMatch(/^10\./);
    expect(sessions.some((s) => !s.current && s.device === 'Firefox 133 on macOS')).toBe(true);
    // Seen from the other session, the flag moves.
    const fromB = (await list(b.auth)).json().data.sessions as Listed[];
    expect(fromB.find((s) => s.current)!.device).toBe('Firefox 133 on macOS');
    expect(res.body).not.toContain(a.refreshToken);
    expect(res.body).not.toContain('token_hash');
  });

  it('revoking a session ends its access token at its next request, and its refresh token', async () => {
    const a = await signIn(CHROME);
    const b = await signIn(FIREFOX);
    expect((await me(b.auth)).statusCode).toBe(200);
    const bId = ((await list(b.auth)).json().data.sessions as Listed[]).find((s) => s.current)!.id;
    const del = await env.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${bId}`, headers: a.auth });
    expect(del.statusCode).toBe(200);
    expect((await me(b.auth)).statusCode).toBe(401);
    expect((await refresh(b.refreshToken)).statusCode).toBe(403);
    expect((await me(a.auth)).statusCode).toBe(200);
    expect(((await list(a.auth)).json().data.sessions as Listed[]).some((s) => s.id === bId)).toBe(false);
  });

  it('a rotated session keeps its id and stays revocable', async () => {
    const a = await signIn(CHROME);
    const b = await signIn(FIREFOX);
    const bId = ((await list(b.auth)).json().data.sessions as Listed[]).find((s) => s.current)!.id;
    const rotated = await refresh(b.refreshToken);
    expect(rotated.statusCode).toBe(200);
    const bAuth = { authorization: `Bearer ${rotated.json().data.token}` };
    expect(((await list(bAuth)).json().data.sessions as Listed[]).find((s) => s.current)!.id).toBe(bId);
    await env.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${bId}`, headers: a.auth });
    expect((await me(bAuth)).statusCode).toBe(401);
  });

  it('revoke-others ends every other session and keeps this one', async () => {
    const a = await signIn(CHROME);
    const b = await signIn(FIREFOX);
    const c = await signIn(FIREFOX);
    const res = await env.app.inject({ method: 'POST', url: '/api/auth/sessions/revoke-others', headers: a.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.revoked).toBeGreaterThanOrEqual(2);
    expect((await me(b.auth)).statusCode).toBe(401);
    expect((await me(c.auth)).statusCode).toBe(401);
    expect((await me(a.auth)).statusCode).toBe(200);
    const left = (await list(a.auth)).json().data.sessions as Listed[];
    expect(left).toHaveLength(1);
    expect(left[0]!.current).toBe(true);
  });

  it("another operator's session, an unknown or a malformed id: 404 session_not_found, nothing revoked", async () => {
    const a = await signIn(CHROME);
    const other = await signIn(CHROME, 'other@example.com');
    const otherId = ((await list(other.auth)).json().data.sessions as Listed[])[0]!.id;
    for (const id of [otherId, 'f'.repeat(32), 'not-an-id']) {
      const res = await env.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${id}`, headers: a.auth });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('session_not_found');
    }
    expect((await me(other.auth)).statusCode).toBe(200);
  });

  it('revoking the current session signs this browser out; logout ends the access token too', async () => {
    const a = await signIn(CHROME);
    const aId = ((await list(a.auth)).json().data.sessions as Listed[]).find((s) => s.current)!.id;
    expect((await env.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${aId}`, headers: a.auth })).statusCode).toBe(200);
    expect((await me(a.auth)).statusCode).toBe(401);
    const b = await signIn(CHROME);
    const out = await env.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refreshToken: b.refreshToken } });
    expect(out.statusCode).toBe(200);
    expect((await me(b.auth)).statusCode).toBe(401);
  });

  it('needs a session', async () => {
    expect((await env.app.inject({ method: 'GET', url: '/api/auth/sessions' })).statusCode).toBe(401);
  });
});
