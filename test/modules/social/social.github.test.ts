/** GitHub sign-in end to end against a fake GitHub on 127.0.0.1 (docs/wire-compatibility.md §2.17). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProject } from '../../helpers/fixtures.js';
import { PASSWORD, signup } from '../auth/helpers.js';
import { createSocialEnv, fragmentToken, runFlow, socialProject, type SocialEnv } from './helpers.js';

let s: SocialEnv;
let p: TestProject;

beforeAll(async () => {
  s = await createSocialEnv();
  p = await socialProject(s);
});
afterAll(() => s.close());

describe('GitHub sign-in', () => {
  it('start redirects to GitHub with state, PKCE S256 and the registered callback URL', async () => {
    const res = await s.env.app.inject({ method: 'GET', url: `/api/userAuth/social/github/start?x-api-key=${p.publishableKey}` });
    expect(res.statusCode).toBe(302);
    const url = new URL(res.headers.location as string);
    expect(url.origin + url.pathname).toBe(`${s.github.url}/login/oauth/authorize`);
    expect(url.searchParams.get('client_id')).toBe(s.github.clientId);
    expect(url.searchParams.get('redirect_uri')).toBe(`${s.env.config.publicUrl}/api/userAuth/social/github/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('state')!.length).toBeGreaterThanOrEqual(32);
    const row = await s.env.ctx.db.admin.selectFrom('social_states').selectAll().where('project_id', '=', p.id).executeTakeFirstOrThrow();
    expect(row.state_hash).not.toBe(url.searchParams.get('state'));
    expect(JSON.stringify(row.code_verifier)).toContain('encrypted');
  });

  it('a new user is created, redirected with exactly the documented parameters; token only in the fragment', async () => {
    s.github.nextUser = { id: 501, login: 'newbie', name: 'New Bie', emails: [{ email: 'Newbie@Example.com', primary: true, verified: true }] };
    const r = await runFlow(s.env.app, 'github', p);
    expect(r.status).toBe(302);
    const url = r.redirect!;
    expect(url.origin + url.pathname).toBe('http://localhost:5173/auth/callback');
    expect([...url.searchParams.keys()].sort()).toEqual(['isNewUser', 'linkedByEmail', 'projectId', 'provider', 'rtCode', 'userId']);
    expect(url.searchParams.get('isNewUser')).toBe('true');
    expect(url.searchParams.get('linkedByEmail')).toBe('false');
    expect(url.searchParams.get('provider')).toBe('github');
    expect(url.searchParams.get('projectId')).toBe(p.id);
    const token = fragmentToken(url);
    expect(token.split('.')).toHaveLength(3);
    const refreshCookie = r.cookies.find((c) => c.name === 'refreshToken')!;
    expect(url.toString()).not.toContain(refreshCookie.value);
    const user = await s.env.ctx.db.admin.selectFrom('app_users').selectAll().where('id', '=', url.searchParams.get('userId')!).executeTakeFirstOrThrow();
    expect(user).toMatchObject({ email: 'newbie@example.com', github_id: '501', auth_providers: ['github'], email_verified: true });
    expect(user.password_hash).toMatch(/^\$argon2id\$/);
    const ex = await s.env.app.inject({ method: 'POST', url: '/api/userAuth/social/exchange', headers: p.pk, payload: { token, rtCode: url.searchParams.get('rtCode') } });
    expect(ex.statusCode).toBe(200);
    expect(ex.json()).toMatchObject({ success: true, message: 'Refresh token exchanged successfully' });
    expect(ex.json().data.refreshToken).toBe(refreshCookie.value);
    const again = await runFlow(s.env.app, 'github', p);
    expect(again.redirect!.searchParams.get('isNewUser')).toBe('false');
    expect(again.redirect!.searchParams.get('userId')).toBe(url.searchParams.get('userId'));
  });

  it('links an existing account when GitHub verified the same email (linkedByEmail=true)', async () => {
    const { body } = await signup(s.env, p, { email: 'linkme@example.com' });
    s.github.nextUser = { id: 777, login: 'linker', emails: [{ email: 'linkme@example.com', primary: true, verified: true }] };
    const r = await runFlow(s.env.app, 'github', p);
    expect(r.redirect!.searchParams.get('linkedByEmail')).toBe('true');
    expect(r.redirect!.searchParams.get('userId')).toBe(body.data.user._id);
    const row = await s.env.ctx.db.admin.selectFrom('app_users').selectAll().where('id', '=', body.data.user._id).executeTakeFirstOrThrow();
    expect(row.github_id).toBe('777');
    expect(row.auth_providers).toEqual(['github']);
    // The account's email was never verified, so its password proved nothing and is dropped
    // (social.pre-account-takeover.test.ts); the owner sets one by reset.
    const login = await s.env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email: 'linkme@example.com', password: PASSWORD } });
    expect(login.statusCode).toBe(401);
  });

  it('refuses to link on an unverified provider email', async () => {
    await signup(s.env, p, { email: 'victim@example.com' });
    s.github.nextUser = { id: 666, login: 'attacker', email: 'victim@example.com', emails: [{ email: 'victim@example.com', primary: true, verified: false }] };
    const r = await runFlow(s.env.app, 'github', p);
    expect(r.redirect!.searchParams.get('error')).toMatch(/not verified/);
    expect(r.redirect!.searchParams.get('rtCode')).toBeNull();
    const row = await s.env.ctx.db.admin.selectFrom('app_users').select('github_id').where('email', '=', 'victim@example.com').executeTakeFirstOrThrow();
    expect(row.github_id).toBeNull();
  });

  it('no email from GitHub → error redirect', async () => {
    s.github.nextUser = { id: 888, login: 'ghost', emails: [] };
    const r = await runFlow(s.env.app, 'github', p);
    expect(r.redirect!.searchParams.get('error')).toMatch(/did not return an email/);
  });

  it('a provider error is forwarded as ?error=', async () => {
    s.github.denyWith = 'The user denied your request.';
    const r = await runFlow(s.env.app, 'github', p);
    expect(r.redirect!.searchParams.get('error')).toBe('The user denied your request.');
  });

  it('unknown provider 404; disabled provider 422; bad key 401', async () => {
    const unknown = await s.env.app.inject({ method: 'GET', url: `/api/userAuth/social/twitter/start?key=${p.publishableKey}` });
    expect([unknown.statusCode, unknown.json().message]).toEqual([404, 'Unsupported social auth provider']);
    const bad = await s.env.app.inject({ method: 'GET', url: '/api/userAuth/social/github/start?key=pk_live_nope' });
    expect(bad.statusCode).toBe(401);
    const off = await s.env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/auth/providers`, headers: p.owner.auth, payload: { github: { enabled: false } } });
    expect(off.statusCode).toBe(200);
    const disabled = await s.env.app.inject({ method: 'GET', url: `/api/userAuth/social/github/start?key=${p.publishableKey}` });
    expect(disabled.statusCode).toBe(422);
    expect(disabled.json().message).toMatch(/disabled or incomplete/);
    await s.env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/auth/providers`, headers: p.owner.auth, payload: { github: { enabled: true } } });
  });

  it('an internal failure reaches the browser only as a generic message (details stay in the log)', async () => {
    s.github.userApiStatus = 500;
    try {
      const r = await runFlow(s.env.app, 'github', p);
      const error = r.redirect!.searchParams.get('error');
      expect(error).toBe('github sign-in failed. Please try again.');
      expect(r.redirect!.toString()).not.toMatch(/internal|answered|500/);
    } finally {
      s.github.userApiStatus = undefined;
    }
  });
});
