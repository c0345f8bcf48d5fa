/**
 * Threat: password guessing and sign-up floods. Login and register share 10 per 15 min per IP;
 * failed logins are also limited per account (login.distributed-brute-force.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { register } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
  await register(env, 'rl@example.com');
});
afterAll(() => env.close());

const attempt = (ip: string, email = 'rl@example.com') =>
  env.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: ip, payload: { email, password: 'wrong password' } });

describe('operator login/register rate limit', () => {
  it('the 11th attempt from one IP within 15 minutes is 429 with Retry-After; other IPs are unaffected', async () => {
    for (let i = 0; i < 10; i++) expect((await attempt('192.0.2.1')).statusCode).toBe(401);
    const limited = await attempt('192.0.2.1');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json().message).toBe('Too many attempts. Please try again in 15 minutes.');
    const reg = await env.app.inject({ method: 'POST', url: '/api/auth/register', remoteAddress: '192.0.2.1', payload: { email: 'x@example.com', password: 'long enough pw' } });
    expect(reg.statusCode).toBe(429);
    expect((await attempt('192.0.2.2', 'other@example.com')).statusCode).toBe(401);
  });
});
