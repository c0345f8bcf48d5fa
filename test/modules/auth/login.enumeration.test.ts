/**
 * Threat: learning which emails have accounts. Login answers an unknown email exactly like a
 * wrong password, after the same argon2 work; recovery endpoints answer the same for every
 * email and send mail only to real accounts.
 */
import type { SystemMail } from '../../../src/context.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authProject, captureMail, signup, uniqueEmail } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let mail: SystemMail[];

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  mail = captureMail(env);
  p = await authProject(env);
});
afterAll(() => env.close());

const post = (url: string, payload: Record<string, unknown>) => env.app.inject({ method: 'POST', url, headers: p.pk, payload });

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

describe('login enumeration', () => {
  it('unknown email and wrong password: same status, same body, comparable time (argon2 on both paths)', async () => {
    const email = uniqueEmail();
    await signup(env, p, { email });
    await post('/api/userAuth/login', { email: uniqueEmail(), password: 'warm up' }); // dummy hash ready
    const known: number[] = [];
    const unknown: number[] = [];
    let bodies: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      known.push(await timed(async () => bodies.push((await post('/api/userAuth/login', { email, password: 'wrong pass' })).json())));
      unknown.push(await timed(async () => bodies.push((await post('/api/userAuth/login', { email: uniqueEmail('x'), password: 'wrong pass' })).json())));
    }
    bodies = bodies.map((b) => JSON.stringify(b));
    expect(new Set(bodies).size).toBe(1);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // An unknown email still costs one argon2 verify: not a fraction of the known-email time.
    expect(median(unknown)).toBeGreaterThan(median(known) * 0.5);
    expect(median(unknown)).toBeGreaterThan(5);
  });
});

describe('recovery enumeration', () => {
  it('request-password-reset answers the same for known and unknown emails, mailing only real users', async () => {
    const email = uniqueEmail();
    await signup(env, p, { email });
    const before = mail.length;
    const a = await post('/api/userAuth/request-password-reset', { email });
    const b = await post('/api/userAuth/request-password-reset', { email: uniqueEmail('ghost') });
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(a.json()).toEqual(b.json());
    expect(mail.slice(before).map((m) => m.to)).toEqual([email]);
  });

  it('resend-verification-otp answers the same for unknown, unverified and verified emails', async () => {
    const email = uniqueEmail();
    await signup(env, p, { email });
    await env.ctx.db.admin.updateTable('app_users').set({ email_verified: true }).where('email', '=', email).execute();
    const verified = await post('/api/userAuth/resend-verification-otp', { email });
    const ghost = await post('/api/userAuth/resend-verification-otp', { email: uniqueEmail('ghost') });
    expect(verified.statusCode).toBe(200);
    expect(verified.json()).toEqual(ghost.json());
  });

  it('verify-email and reset-password give the same 400 for unknown emails as for wrong codes', async () => {
    const email = uniqueEmail();
    await signup(env, p, { email });
    const known = await post('/api/userAuth/verify-email', { email, otp: '000000' });
    const ghost = await post('/api/userAuth/verify-email', { email: uniqueEmail('ghost'), otp: '000000' });
    expect(known.statusCode).toBe(400);
    expect(ghost.json()).toEqual(known.json());
    const r1 = await post('/api/userAuth/reset-password', { email, otp: '000000', newPassword: 'whatever 1' });
    const r2 = await post('/api/userAuth/reset-password', { email: uniqueEmail('ghost'), otp: '000000', newPassword: 'whatever 1' });
    expect(r1.json()).toEqual(r2.json());
  });
});
