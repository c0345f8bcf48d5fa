/**
 * Threat: password guessing, mass sign-up and OTP brute force. Limits (docs/auth.md): login 30/min
 * per IP, failed logins 10 per 15 min per email (any IP) and 50 per 15 min per IP; sign-up 20/min per IP; OTP send/verify and reset 5 per
 * 10 min per email; refresh 30/min per IP. 429 with Retry-After. With REDIS_URL the counts are
 * shared by every API node (tested when a Redis answers on 127.0.0.1:6379).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot } from '../../../src/boot.js';
import { loadConfig } from '../../../src/config.js';
import { buildApp } from '../../../src/server.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authProject, captureMail, signup, uniqueEmail } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  env = await createTestEnv();
  captureMail(env);
  p = await authProject(env);
});
afterAll(() => env.close());

const login = (email: string, ip = '10.0.0.1', proj = p) =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: proj.pk, remoteAddress: ip, payload: { email, password: 'wrong pass' } });

describe('rate limits', () => {
  it('login: the 11th failed attempt for one email is 429 with Retry-After, from any IP', async () => {
    const email = uniqueEmail();
    for (let i = 0; i < 10; i++) expect((await login(email, '10.0.0.1')).statusCode).toBe(401);
    const res = await login(email, '10.0.0.1');
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await login(email, '10.0.0.2')).statusCode).toBe(429);
    expect((await login(uniqueEmail(), '10.0.0.2')).statusCode).toBe(401);
  });

  it('login: the 31st attempt from one IP (any emails) is 429', async () => {
    for (let i = 0; i < 30; i++) expect((await login(uniqueEmail(), '10.0.1.1')).statusCode).toBe(401);
    expect((await login(uniqueEmail(), '10.0.1.1')).statusCode).toBe(429);
  });

  it('sign-up: 20 per minute per IP', async () => {
    for (let i = 0; i < 20; i++) {
      const r = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: p.pk, remoteAddress: '10.0.2.1', payload: { email: 'bad', password: 'long enough' } });
      expect(r.statusCode).toBe(400);
    }
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: p.pk, remoteAddress: '10.0.2.1', payload: { email: uniqueEmail(), password: 'long enough' } });
    expect(res.statusCode).toBe(429);
  });

  it('OTP verify: 5 per 10 minutes per email', async () => {
    const email = uniqueEmail();
    for (let i = 0; i < 5; i++) {
      const r = await env.app.inject({ method: 'POST', url: '/api/userAuth/verify-email', headers: p.pk, payload: { email, otp: '000000' } });
      expect(r.statusCode).toBe(400);
    }
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/verify-email', headers: p.pk, payload: { email, otp: '000000' } });
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(60);
  });

  it('refresh: 30 per minute per IP', async () => {
    for (let i = 0; i < 30; i++) {
      const r = await env.app.inject({ method: 'POST', url: '/api/userAuth/refresh-token', headers: p.pk, remoteAddress: '10.0.3.1' });
      expect(r.statusCode).toBe(401);
    }
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/refresh-token', headers: p.pk, remoteAddress: '10.0.3.1' });
    expect(res.statusCode).toBe(429);
  });
});

const redisUp = await new Promise<boolean>((resolve) => {
  const s = net.connect(6379, '127.0.0.1');
  s.once('connect', () => { s.destroy(); resolve(true); });
  s.once('error', () => resolve(false));
  s.setTimeout(300, () => { s.destroy(); resolve(false); });
});

describe.skipIf(!redisUp)('rate limits shared across API nodes (Redis)', () => {
  it('attempts on node A and node B count against one limit', async () => {
    const redisEnv = { REDIS_URL: 'redis://127.0.0.1:6379' };
    const a = await createTestEnv(redisEnv);
    const q = await authProject(a);
    const second = await boot(loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'warn', PLINTH_DATA_DIR: a.config.dataDir, DATABASE_URL: a.databaseUrl, ...redisEnv }), { skipMigrations: true });
    const appB = await buildApp(second.ctx);
    try {
      const email = uniqueEmail('redis');
      const ip = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
      const attempt = (app: typeof appB) =>
        app.inject({ method: 'POST', url: '/api/userAuth/login', headers: q.pk, remoteAddress: ip, payload: { email, password: 'wrong pass' } });
      for (let i = 0; i < 5; i++) expect((await attempt(a.app)).statusCode).toBe(401);
      for (let i = 0; i < 5; i++) expect((await attempt(appB)).statusCode).toBe(401);
      expect((await attempt(a.app)).statusCode).toBe(429);
      expect((await attempt(appB)).statusCode).toBe(429);
    } finally {
      await appB.close();
      await second.close();
      await a.close();
    }
  });
});

it('sign-up limit is per IP: another IP still signs up', async () => {
  const { res } = await signup(env, p);
  expect(res.statusCode).toBe(201);
});
