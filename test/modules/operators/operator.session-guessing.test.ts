/**
 * Threat: guessing dashboard refresh sessions (the operator side of refresh.session-id-guessing).
 * Operator refresh tokens carry no id: a token is 256 random bits, found by its SHA-256. A junk
 * token therefore matches no session, revokes nothing and answers like any unknown token; the
 * family ids kept with the sessions are random like end users' session ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { cookiesOf, freshIp, login, register } from './helpers.js';

let env: TestEnv;
const email = 'guess@example.com';

beforeAll(async () => {
  env = await createTestEnv();
  await register(env, email);
});
afterAll(() => env.close());

const refresh = (refreshToken: string) =>
  env.app.inject({ method: 'POST', url: '/api/auth/refresh-token', remoteAddress: freshIp(), payload: { refreshToken } });

async function startSession(): Promise<string> {
  return (await login(env, email, 'long enough pw', { 'x-refresh-token-mode': 'header' })).json().data.refreshToken as string;
}

describe('operator refresh sessions', () => {
  it('family ids are random 128-bit values', async () => {
    await startSession();
    await startSession();
    const rows = await env.ctx.db.admin.selectFrom('operator_sessions').select('family_id').orderBy('created_at', 'desc').limit(2).execute();
    const [a, b] = rows.map((r) => r.family_id);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(b).toMatch(/^[0-9a-f]{32}$/);
    expect(a!.slice(8, 18)).not.toBe(b!.slice(8, 18));
  });

  it('junk tokens answer like an unknown token and revoke nothing', async () => {
    const victim = await startSession();
    const unknown = await refresh('x'.repeat(43));
    expect([unknown.statusCode, unknown.json().code]).toEqual([403, 'refresh_invalid']);
    for (const junk of [victim.slice(0, -1), `${victim}x`, victim.toUpperCase()]) {
      const res = await refresh(junk);
      expect(res.json()).toEqual(unknown.json());
    }
    const res = await refresh(victim);
    expect(res.statusCode).toBe(200);
    expect(cookiesOf(res).refreshToken).toBeTruthy();
  });
});
