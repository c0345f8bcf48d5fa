/**
 * Threat: password guessing that escapes the rate limits, on end users (/api/userAuth/login)
 * and operators (/api/auth/login):
 * - by sending a new X-Forwarded-For with every request: the client address comes from it only
 *   for the proxies TRUST_PROXY names (default: none), so rotating it changes nothing;
 * - by spreading the guesses for one account over many addresses: failed logins are also
 *   limited per account (email), whatever the address.
 * Successful logins do not count towards those limits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { authProject, captureMail, PASSWORD, uniqueEmail } from './helpers.js';

const HEX = 'a'.repeat(64);
const PRODUCTION = { NODE_ENV: 'production', ENCRYPTION_KEY: HEX, DASHBOARD_JWT_SECRET: HEX };
let n = 0;
const randomAddress = () => `198.18.${(n >> 8) & 255}.${n++ & 255}`;

async function setup(env: TestEnv) {
  captureMail(env);
  const p = await authProject(env);
  const email = uniqueEmail();
  const signup = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: p.pk, remoteAddress: randomAddress(), payload: { email, password: PASSWORD } });
  expect(signup.statusCode).toBe(201);
  return { p, email, op: await makeOperator(env.ctx) };
}

function userLogin(env: TestEnv, p: TestProject, email: string, password: string, net: { remoteAddress?: string; xff?: string }) {
  return env.app.inject({
    method: 'POST', url: '/api/userAuth/login', remoteAddress: net.remoteAddress ?? '10.1.1.1',
    headers: { ...p.pk, ...(net.xff ? { 'x-forwarded-for': net.xff } : {}) }, payload: { email, password },
  });
}

function operatorLogin(env: TestEnv, email: string, password: string, net: { remoteAddress?: string; xff?: string }) {
  return env.app.inject({
    method: 'POST', url: '/api/auth/login', remoteAddress: net.remoteAddress ?? '10.1.1.1',
    headers: net.xff ? { 'x-forwarded-for': net.xff } : {}, payload: { email, password },
  });
}

describe('rotating X-Forwarded-For (production, TRUST_PROXY unset)', () => {
  let env: TestEnv;
  let p: TestProject;
  beforeAll(async () => {
    env = await createTestEnv(PRODUCTION);
    ({ p } = await setup(env));
  });
  afterAll(() => env.close());

  it('end users: the 31st attempt from one address is refused, whatever X-Forwarded-For says', async () => {
    for (let i = 0; i < 30; i++) expect((await userLogin(env, p, uniqueEmail(), 'wrong pass', { xff: randomAddress() })).statusCode).toBe(401);
    const res = await userLogin(env, p, uniqueEmail(), 'wrong pass', { xff: randomAddress() });
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('operators: the 11th attempt from one address is refused, whatever X-Forwarded-For says', async () => {
    for (let i = 0; i < 10; i++) expect((await operatorLogin(env, uniqueEmail(), 'wrong pass', { remoteAddress: '10.2.2.2', xff: randomAddress() })).statusCode).toBe(401);
    expect((await operatorLogin(env, uniqueEmail(), 'wrong pass', { remoteAddress: '10.2.2.2', xff: randomAddress() })).statusCode).toBe(429);
  });
});

describe('behind a trusted proxy (TRUST_PROXY=10.0.0.9)', () => {
  let env: TestEnv;
  let p: TestProject;
  beforeAll(async () => {
    env = await createTestEnv({ ...PRODUCTION, TRUST_PROXY: '10.0.0.9' });
    ({ p } = await setup(env));
  });
  afterAll(() => env.close());

  it('the address the proxy saw counts; what the client put in front of it does not', async () => {
    const via = (client: string) => ({ remoteAddress: '10.0.0.9', xff: `${randomAddress()}, ${client}` });
    for (let i = 0; i < 30; i++) expect((await userLogin(env, p, uniqueEmail(), 'wrong pass', via('203.0.113.7'))).statusCode).toBe(401);
    expect((await userLogin(env, p, uniqueEmail(), 'wrong pass', via('203.0.113.7'))).statusCode).toBe(429);
    // Another client behind the same proxy has its own budget.
    expect((await userLogin(env, p, uniqueEmail(), 'wrong pass', via('203.0.113.8'))).statusCode).toBe(401);
    // A request that did not come through the proxy: its X-Forwarded-For is ignored.
    for (let i = 0; i < 30; i++) expect((await userLogin(env, p, uniqueEmail(), 'wrong pass', { remoteAddress: '192.0.2.1', xff: randomAddress() })).statusCode).toBe(401);
    expect((await userLogin(env, p, uniqueEmail(), 'wrong pass', { remoteAddress: '192.0.2.1', xff: randomAddress() })).statusCode).toBe(429);
  });
});

describe('behind one proxy, trusted by hop count (TRUST_PROXY=1, as docs/deploy.md sets it)', () => {
  let env: TestEnv;
  let p: TestProject;
  beforeAll(async () => {
    env = await createTestEnv({ ...PRODUCTION, TRUST_PROXY: '1' });
    ({ p } = await setup(env));
  });
  afterAll(() => env.close());

  it("the address the proxy saw counts, not the proxy's own (every client would share its budget) nor what the client put in front", async () => {
    const via = (client: string) => ({ remoteAddress: '10.0.0.9', xff: `${randomAddress()}, ${client}` });
    for (let i = 0; i < 30; i++) expect((await userLogin(env, p, uniqueEmail(), 'wrong pass', via('203.0.113.7'))).statusCode).toBe(401);
    expect((await userLogin(env, p, uniqueEmail(), 'wrong pass', via('203.0.113.7'))).statusCode).toBe(429);
    // Another client behind the same proxy has its own budget.
    expect((await userLogin(env, p, uniqueEmail(), 'wrong pass', via('203.0.113.8'))).statusCode).toBe(401);
  });
});

describe('guesses for one account spread over many addresses', () => {
  let env: TestEnv;
  let p: TestProject;
  let email: string;
  let op: TestOperator;
  beforeAll(async () => {
    env = await createTestEnv();
    ({ p, email, op } = await setup(env));
  });
  afterAll(() => env.close());

  it('end users: after 10 failed logins for one email, the 11th is refused from any address, even with the right password', async () => {
    for (let i = 0; i < 10; i++) expect((await userLogin(env, p, email, `wrong ${i}`, { remoteAddress: randomAddress() })).statusCode).toBe(401);
    const res = await userLogin(env, p, email, 'another guess', { remoteAddress: randomAddress() });
    expect(res.statusCode).toBe(429);
    expect((await userLogin(env, p, email, PASSWORD, { remoteAddress: randomAddress() })).statusCode).toBe(429);
    // Other accounts are not affected.
    expect((await userLogin(env, p, uniqueEmail(), 'wrong', { remoteAddress: randomAddress() })).statusCode).toBe(401);
  });

  it('operators: the same per account', async () => {
    for (let i = 0; i < 10; i++) expect((await operatorLogin(env, op.email, `wrong ${i}`, { remoteAddress: randomAddress() })).statusCode).toBe(401);
    expect((await operatorLogin(env, op.email, op.password, { remoteAddress: randomAddress() })).statusCode).toBe(429);
  });

  it('successful logins do not count: an account that signs in often is never locked out', async () => {
    const q = await setup(env);
    for (let i = 0; i < 15; i++) expect((await userLogin(env, q.p, q.email, PASSWORD, { remoteAddress: '10.9.9.9' })).statusCode).toBe(200);
    for (let i = 0; i < 9; i++) expect((await userLogin(env, q.p, q.email, 'typo', { remoteAddress: '10.9.9.9' })).statusCode).toBe(401);
    expect((await userLogin(env, q.p, q.email, PASSWORD, { remoteAddress: '10.9.9.9' })).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await operatorLogin(env, q.op.email, q.op.password, { remoteAddress: '10.9.9.8' })).statusCode).toBe(200);
  });
});
