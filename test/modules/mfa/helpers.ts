/** Shared set-up of the end-user MFA tests: sign up, enrol an authenticator app, sign in in two steps. */
import { decodeJwt } from 'jose';
import { totpCode } from '../../../src/lib/identity/totp.js';
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { PASSWORD, signup, uniqueEmail } from '../auth/helpers.js';

export const claimsOf = (token: string) => decodeJwt(token) as Record<string, unknown> & { aal: string; amr: Array<{ method: string }>; sid?: string };

export interface Enrolled {
  email: string;
  userId: string;
  secret: string;
  recoveryCodes: string[];
  /** The aal2 token confirm returned. */
  accessToken: string;
  refreshToken: string;
}

export const bearer = (p: TestProject, token: string) => ({ ...p.pk, authorization: `Bearer ${token}` });

/** The code of the step `steps` away from the env's clock. */
export const codeAt = (env: TestEnv, secret: string, steps = 0) => totpCode(secret, new Date(env.clock.now().getTime() + steps * 30_000));

/** Moves the fake clock to the next 30 s step (so a fresh code is usable). */
export function nextStep(env: TestEnv): void {
  env.clock.advance(30_000);
}

export async function enrolTotp(env: TestEnv, p: TestProject, token: string) {
  const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/totp/enroll', headers: bearer(p, token) });
  if (res.statusCode !== 200) throw new Error(`enroll ${res.statusCode} ${res.body}`);
  return res.json().data as { secret: string; otpauthUri: string; qrCode: string };
}

/** A new user with a confirmed authenticator app. */
export async function enrolledUser(env: TestEnv, p: TestProject): Promise<Enrolled> {
  const email = uniqueEmail('mfa');
  const { body } = await signup(env, p, { email });
  const { secret } = await enrolTotp(env, p, body.data.accessToken);
  const res = await env.app.inject({
    method: 'POST', url: '/api/userAuth/mfa/totp/confirm', headers: bearer(p, body.data.accessToken), payload: { code: codeAt(env, secret) },
  });
  if (res.statusCode !== 200) throw new Error(`confirm ${res.statusCode} ${res.body}`);
  nextStep(env);
  return { email, userId: body.data.user._id, secret, recoveryCodes: res.json().data.recoveryCodes, accessToken: res.json().data.accessToken, refreshToken: body.data.refreshToken };
}

export function login(env: TestEnv, p: TestProject, email: string, password = PASSWORD) {
  return env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: { ...p.pk, 'x-refresh-token-mode': 'header' }, payload: { email, password } });
}

export async function challengeFor(env: TestEnv, p: TestProject, email: string): Promise<string> {
  const res = await login(env, p, email);
  const data = res.json().data;
  if (!data?.challengeId) throw new Error(`no challenge: ${res.body}`);
  return data.challengeId;
}

export function verify(env: TestEnv, p: TestProject, payload: Record<string, unknown>) {
  return env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/verify', headers: { ...p.pk, 'x-refresh-token-mode': 'header' }, payload });
}
