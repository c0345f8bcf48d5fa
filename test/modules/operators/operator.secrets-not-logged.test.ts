/**
 * Threat: credentials leaking into logs. After a full dashboard session (register, login,
 * project with keys, mail key, rotation, failed logins), no password, raw API key, provider
 * key or token appears in any log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { freshIp, login, register } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv({ LOG_LEVEL: 'trace' });
});
afterAll(() => env.close());

describe('secrets never reach the logs', () => {
  it('passwords, keys and tokens are absent from every log line', async () => {
    const password = 'Sup3r-Secret-Passw0rd';
    await register(env, 'logs@example.com', password);
    await login(env, 'logs@example.com', 'Wrong-Passw0rd-XYZ');
    const session = await login(env, 'logs@example.com', password, { 'x-refresh-token-mode': 'header' });
    const { token, refreshToken } = session.json().data;
    const auth = { authorization: `Bearer ${token}` };
    const created = (await env.app.inject({ method: 'POST', url: '/api/projects', headers: auth, payload: { name: 'logged' } })).json().data;
    await env.app.inject({ method: 'PATCH', url: `/api/projects/${created._id}`, headers: auth, payload: { providerApiKey: 're_very_secret_key' } });
    const rotated = (await env.app.inject({ method: 'POST', url: `/api/projects/${created._id}/api-key`, headers: auth, payload: { keyType: 'secret' } })).json().data;
    await env.app.inject({ method: 'POST', url: '/api/auth/refresh-token', remoteAddress: freshIp(), payload: { refreshToken } });
    await env.app.inject({ method: 'POST', url: '/api/auth/refresh-token', remoteAddress: freshIp(), payload: { refreshToken } }); // reuse → warn log
    await env.app.inject({ method: 'PUT', url: '/api/auth/change-password', headers: auth, payload: { currentPassword: password, newPassword: 'An0ther-Secret-Pw' } });

    const all = env.logs.join('\n');
    expect(env.logs.length).toBeGreaterThan(5);
    for (const secret of [password, 'Wrong-Passw0rd-XYZ', 'An0ther-Secret-Pw', 're_very_secret_key', created.secretKey, created.publishableKey, rotated.apiKey, token, refreshToken]) {
      expect(all).not.toContain(secret);
    }
  });
});
