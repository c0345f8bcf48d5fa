/**
 * Threat: learning which emails have accounts. Login answers an unknown email exactly like a
 * wrong password, after the same argon2 work; recovery endpoints answer the same for every
 * email and send mail only to real accounts.
 */
import argon2 from 'argon2';
import type { SystemMail } from '../../../src/context.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authTestEnv, signup, uniqueEmail } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let mail: SystemMail[];

beforeAll(async () => {
  ({ env, mail, p } = await authTestEnv());
});
afterAll(() => env.close());

const post = (url: string, payload: Record<string, unknown>) => env.app.inject({ method: 'POST', url, headers: p.pk, payload });

describe('login enumeration', () => {
  it('unknown email and wrong password: same status, same body, and the same argon2 work on both paths', async () => {
    const email = uniqueEmail();
    await signup(env, p, { email });
    const verify = vi.spyOn(argon2, 'verify');
    const known = await post('/api/userAuth/login', { email, password: 'wrong pass' });
    const knownCalls = verify.mock.calls.map(([hash]) => hash);
    verify.mockClear();
    const unknown = await post('/api/userAuth/login', { email: uniqueEmail('x'), password: 'wrong pass' });
    const unknownCalls = verify.mock.calls.map(([hash]) => hash);
    verify.mockRestore();

    expect([known.statusCode, unknown.statusCode]).toEqual([401, 401]);
    expect(unknown.json()).toEqual(known.json());
    // Exactly one full argon2 verification each, with the same cost parameters: an unknown
    // email is checked against a dummy hash, so timing does not reveal which emails exist.
    expect(knownCalls).toHaveLength(1);
    expect(unknownCalls).toHaveLength(1);
    const params = (h: unknown) => String(h).split('$').slice(1, 4).join('$'); // argon2id$v=19$m=…,t=…,p=…
    expect(params(unknownCalls[0])).toBe(params(knownCalls[0]));
    expect(params(knownCalls[0])).toMatch(/^argon2id\$v=19\$m=19456,t=2,p=1$/);
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
