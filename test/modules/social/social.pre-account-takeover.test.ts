/**
 * Threat: pre-account takeover through social sign-in. Someone signs up with the victim's
 * email (never verified); the victim later signs in with GitHub or Google, whose verified
 * email matches, and is linked to that account. The squatter's password and refresh token
 * used to keep working. Now the link drops the unproven credentials (password replaced by an
 * unusable one, every session revoked). A provider email that is not verified never creates
 * or links an account, and `requireEmailVerification` applies to social sign-in as to login.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../src/lib/passwords.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authProject, lastCode, PASSWORD, refresh, signup } from '../auth/helpers.js';
import { createSocialEnv, fragmentToken, runFlow, socialProject, type SocialEnv } from './helpers.js';

let s: SocialEnv;
let p: TestProject;

beforeAll(async () => {
  s = await createSocialEnv();
  p = await socialProject(s);
});
afterAll(() => s.close());

const login = (email: string, password = PASSWORD, proj = p) =>
  s.env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: proj.pk, payload: { email, password } });
const me = (token: string) => s.env.app.inject({ method: 'GET', url: '/api/userAuth/me', headers: { ...p.pk, authorization: `Bearer ${token}` } });
const userRow = (email: string, proj = p) =>
  s.env.ctx.db.admin.selectFrom('app_users').selectAll().where('project_id', '=', proj.id).where('email', '=', email).executeTakeFirst();

describe.each(['github', 'google'] as const)('squatted account, then %s sign-in with the verified email', (provider) => {
  it("links the owner and locks the squatter out: password dead, refresh token revoked", async () => {
    const email = `victim-${provider}@example.com`;
    const squat = (await signup(s.env, p, { email, name: 'Squatter' })).body.data;
    if (provider === 'github') s.github.nextUser = { id: 4242, login: 'victim', emails: [{ email, primary: true, verified: true }] };
    else s.google.nextUser = { sub: 'g-victim', email, email_verified: true };

    const r = await runFlow(s.env.app, provider, p);
    expect(r.redirect!.searchParams.get('linkedByEmail')).toBe('true');
    expect(r.redirect!.searchParams.get('userId')).toBe(squat.user._id);
    expect((await me(fragmentToken(r.redirect!))).statusCode).toBe(200);

    expect((await login(email)).statusCode).toBe(401);
    const stolen = await refresh(s.env, p, squat.refreshToken);
    expect(stolen.statusCode).toBe(403);
    const row = (await userRow(email))!;
    expect(row).toMatchObject({ email_verified: true, auth_providers: [provider] });
    const sessions = await s.env.ctx.db.admin.selectFrom('app_user_sessions').select(['token_hash', 'revoked_at', 'used_at'])
      .where('user_id', '=', row.id).execute();
    const live = sessions.filter((x) => x.revoked_at === null && x.used_at === null);
    expect(live).toHaveLength(1); // the owner's new session only
  });
});

describe('an account whose email was verified', () => {
  it('keeps its password and sessions when the same verified email signs in with GitHub', async () => {
    const email = 'verified-owner@example.com';
    const mine = (await signup(s.env, p, { email })).body.data;
    const otp = lastCode(s.mail, email, 'auth.verify-email');
    const ok = await s.env.app.inject({ method: 'POST', url: '/api/userAuth/verify-email', headers: p.pk, payload: { email, otp } });
    expect(ok.statusCode).toBe(200);
    s.github.nextUser = { id: 4343, login: 'owner', emails: [{ email, primary: true, verified: true }] };
    expect((await runFlow(s.env.app, 'github', p)).redirect!.searchParams.get('linkedByEmail')).toBe('true');
    expect((await login(email)).statusCode).toBe(200);
    expect((await refresh(s.env, p, mine.refreshToken)).statusCode).toBe(200);
  });
});

describe('a provider email that is not verified', () => {
  it('never creates an account (GitHub: no verified address in /user/emails)', async () => {
    s.github.nextUser = { id: 5151, login: 'claimer', email: 'nobody-yet@example.com', emails: [{ email: 'nobody-yet@example.com', primary: true, verified: false }] };
    const r = await runFlow(s.env.app, 'github', p);
    expect(r.redirect!.searchParams.get('error')).toMatch(/not verified/);
    expect(await userRow('nobody-yet@example.com')).toBeUndefined();
  });

  it('never creates an account (Google: email_verified false)', async () => {
    s.google.nextUser = { sub: 'g-claimer', email: 'nobody-either@example.com', email_verified: false };
    const r = await runFlow(s.env.app, 'google', p);
    expect(r.redirect!.searchParams.get('error')).toMatch(/not verified/);
    expect(await userRow('nobody-either@example.com')).toBeUndefined();
  });

  it('never links to an existing account, which keeps its password', async () => {
    const email = 'keep-mine@example.com';
    await signup(s.env, p, { email });
    s.google.nextUser = { sub: 'g-intruder', email, email_verified: false };
    const r = await runFlow(s.env.app, 'google', p);
    expect(r.redirect!.searchParams.get('error')).toMatch(/not verified/);
    expect((await userRow(email))!.google_id).toBeNull();
    expect((await login(email)).statusCode).toBe(200);
  });
});

describe('requireEmailVerification', () => {
  it('turns away an unverified user at social sign-in, as at login', async () => {
    const strict = await authProject(s.env);
    await s.env.app.inject({
      method: 'PATCH', url: `/api/projects/${strict.id}/auth/providers`, headers: strict.owner.auth,
      payload: { github: { enabled: true, clientId: s.github.clientId, clientSecret: s.github.clientSecret } },
    });
    const patch = await s.env.app.inject({ method: 'PATCH', url: `/api/projects/${strict.id}`, headers: strict.owner.auth, payload: { requireEmailVerification: true } });
    expect(patch.statusCode).toBe(200);
    // An account linked to GitHub whose email is not verified (made before this rule existed).
    const email = 'legacy@example.com';
    await s.env.ctx.db.admin.insertInto('app_users').values({
      project_id: strict.id, email, password_hash: await hashPassword('legacy pass'), email_verified: false,
      data: JSON.stringify({}) as never, github_id: '6161', auth_providers: ['github'],
    }).execute();
    expect((await login(email, 'legacy pass', strict)).statusCode).toBe(403);
    s.github.nextUser = { id: 6161, login: 'legacy', emails: [{ email, primary: true, verified: true }] };
    const r = await runFlow(s.env.app, 'github', strict);
    expect(r.redirect!.searchParams.get('error')).toBe('Please verify your email before logging in.');
    expect(r.redirect!.searchParams.get('rtCode')).toBeNull();
  });
});
