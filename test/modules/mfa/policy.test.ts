/**
 * The project's second-factor policy and the operator's view of a user's factors: a project
 * that requires a second factor refuses aal1 tokens with codes the app can act on; the
 * operator lists and resets factors (audited), never reading a secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { makeCollection, type TestProject } from '../../helpers/fixtures.js';
import { authProject, authTestEnv, signup } from '../auth/helpers.js';
import { bearer, claimsOf, codeAt, enrolledUser, enrolTotp, login, nextStep } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ env, p } = await authTestEnv());
});
afterAll(() => env.close());

const me = (proj: TestProject, token: string) => env.app.inject({ method: 'GET', url: '/api/userAuth/me', headers: bearer(proj, token) });

async function requiringProject(): Promise<TestProject> {
  const proj = await authProject(env);
  const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${proj.id}`, headers: proj.owner.auth, payload: { mfaPolicy: 'require' } });
  expect(res.statusCode).toBe(200);
  expect(res.json().data.mfa).toEqual({ policy: 'require' });
  return proj;
}

describe('policy: offer (the default)', () => {
  it('aal1 tokens work everywhere, as before', async () => {
    const { body } = await signup(env, p);
    expect((await me(p, body.data.accessToken)).statusCode).toBe(200);
  });
});

describe('account changes need aal2 once the user has a factor, under either policy', () => {
  it('threat: a stolen password and aal1 token change the password of a user with a second factor (offer policy)', async () => {
    const { body } = await signup(env, p, { password: 'old password 1' });
    const aal1 = body.data.accessToken as string;
    const { secret } = await enrolTotp(env, p, aal1);
    const confirmed = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/totp/confirm', headers: bearer(p, aal1), payload: { code: codeAt(env, secret) } });
    expect(confirmed.statusCode).toBe(200);
    nextStep(env);
    const change = (token: string) => env.app.inject({
      method: 'PUT', url: '/api/userAuth/change-password', headers: bearer(p, token), payload: { currentPassword: 'old password 1', newPassword: 'new password 2' },
    });
    const refused = await change(aal1);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('mfa_required');
    // The password did not change: the old one still opens the two-step sign-in.
    expect((await login(env, p, body.data.user.email, 'old password 1')).json().data.challengeId).toBeTruthy();
    const stepped = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/step-up', headers: bearer(p, aal1), payload: { code: codeAt(env, secret) } });
    expect(claimsOf(stepped.json().data.accessToken).aal).toBe('aal2');
    expect((await change(stepped.json().data.accessToken)).statusCode).toBe(200);
  });

  it('a user without a second factor changes the password with an aal1 token, as before', async () => {
    const { body } = await signup(env, p, { password: 'old password 1' });
    const res = await env.app.inject({
      method: 'PUT', url: '/api/userAuth/change-password', headers: bearer(p, body.data.accessToken), payload: { currentPassword: 'old password 1', newPassword: 'new password 2' },
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('policy: require', () => {
  it('a user who must enrol gets mfa_enrollment_required everywhere but the enrolment routes, then works at aal2', async () => {
    const proj = await requiringProject();
    const { body } = await signup(env, proj);
    const token = body.data.accessToken;
    const refused = await me(proj, token);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('mfa_enrollment_required');
    const logged = await login(env, proj, body.data.user.email);
    expect(logged.json().data.mfaEnrollmentRequired).toBe(true);

    const factors = await env.app.inject({ method: 'GET', url: '/api/userAuth/mfa/factors', headers: bearer(proj, token) });
    expect(factors.statusCode).toBe(200);
    expect(factors.json().data).toMatchObject({ totp: null, passkeys: [], aal: 'aal1' });
    const { secret } = await enrolTotp(env, proj, token);
    const confirmed = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/totp/confirm', headers: bearer(proj, token), payload: { code: codeAt(env, secret) } });
    expect(confirmed.statusCode).toBe(200);
    expect((await me(proj, confirmed.json().data.accessToken)).statusCode).toBe(200);
  });

  it('threat: an aal1 token is refused where aal2 is required (mfa_required), also on the data API', async () => {
    const proj = await requiringProject();
    await makeCollection(env.ctx, proj.id, 'posts', [{ key: 'title', type: 'String' }], { enabled: true, mode: 'public-read' });
    const { body } = await signup(env, proj);
    const aal1 = body.data.accessToken;
    const { secret } = await enrolTotp(env, proj, aal1);
    await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/totp/confirm', headers: bearer(proj, aal1), payload: { code: codeAt(env, secret) } });
    expect(claimsOf(aal1).aal).toBe('aal1');
    const res = await me(proj, aal1);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('mfa_required');
    const data = await env.app.inject({ method: 'POST', url: '/api/data/posts', headers: bearer(proj, aal1), payload: { title: 'x' } });
    expect(data.statusCode).toBe(403);
    expect(data.json().code).toBe('mfa_required');
    const ticket = await env.app.inject({ method: 'POST', url: '/api/realtime/ticket', headers: bearer(proj, aal1), payload: { subscriptions: [{ collection: 'posts' }] } });
    expect(ticket.statusCode).toBe(403);
    expect(ticket.json().code).toBe('mfa_required');
    // Stepping up with a fresh code gives an aal2 token that works.
    nextStep(env);
    const up = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/step-up', headers: bearer(proj, aal1), payload: { code: codeAt(env, secret) } });
    expect(up.statusCode).toBe(200);
    expect((await me(proj, up.json().data.accessToken)).statusCode).toBe(200);
  });

  it('rejects an unknown policy value (400) and keeps the old one', async () => {
    const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}`, headers: p.owner.auth, payload: { mfaPolicy: 'always' } });
    expect(res.statusCode).toBe(400);
  });
});

describe('operator: a user\'s factors', () => {
  it('lists them without any secret and resets them with an audit line', async () => {
    const u = await enrolledUser(env, p);
    const url = `/api/projects/${p.id}/users/${u.userId}/factors`;
    const listed = await env.app.inject({ method: 'GET', url, headers: p.owner.auth });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data).toMatchObject({ totp: { confirmed: true }, passkeys: [], recoveryCodesLeft: 10 });
    expect(listed.body).not.toContain(u.secret);
    expect(listed.body).not.toMatch(/secret|code_hash|codeHash/i);

    const other = await authProject(env);
    expect((await env.app.inject({ method: 'DELETE', url, headers: other.owner.auth })).statusCode).toBe(404);

    const reset = await env.app.inject({ method: 'DELETE', url, headers: p.owner.auth });
    expect(reset.statusCode).toBe(200);
    const audit = env.logs.find((l) => l.includes('"audit":"mfa.reset"') && l.includes(u.userId));
    expect(audit).toBeDefined();
    expect(audit).toContain(p.owner.id);
    expect(audit).not.toContain(u.secret);
    expect((await login(env, p, u.email)).json().data.accessToken).toBeTruthy();
  });
});
