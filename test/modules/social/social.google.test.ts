/** Google sign-in (OIDC) against a fake Google: ID token signature, audience, nonce, linking. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProject } from '../../helpers/fixtures.js';
import { signup } from '../auth/helpers.js';
import { createSocialEnv, fragmentToken, runFlow, socialProject, type SocialEnv } from './helpers.js';

let s: SocialEnv;
let p: TestProject;

beforeAll(async () => {
  s = await createSocialEnv();
  p = await socialProject(s);
});
afterAll(() => s.close());

describe('Google sign-in', () => {
  it('start sends PKCE, nonce and the OIDC scope', async () => {
    const res = await s.env.app.inject({ method: 'GET', url: `/api/userAuth/social/google/start?key=${p.publishableKey}` });
    const url = new URL(res.headers.location as string);
    expect(url.origin + url.pathname).toBe(s.google.env.GOOGLE_AUTH_URL);
    expect(url.searchParams.get('scope')).toBe('openid email profile');
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  });

  it('creates a user from a validated ID token; the exchange returns the refresh token', async () => {
    s.google.nextUser = { sub: 'g-100', email: 'gina@example.com', email_verified: true, name: 'Gina' };
    const r = await runFlow(s.env.app, 'google', p);
    const url = r.redirect!;
    expect(url.searchParams.get('isNewUser')).toBe('true');
    const row = await s.env.ctx.db.admin.selectFrom('app_users').selectAll().where('id', '=', url.searchParams.get('userId')!).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ email: 'gina@example.com', google_id: 'g-100', auth_providers: ['google'], email_verified: true });
    expect(row.data).toMatchObject({ name: 'Gina' });
    const ex = await s.env.app.inject({ method: 'POST', url: '/api/userAuth/social/exchange', headers: p.pk, payload: { token: fragmentToken(url), rtCode: url.searchParams.get('rtCode') } });
    expect(ex.statusCode).toBe(200);
    const me = await s.env.app.inject({ method: 'GET', url: '/api/userAuth/me', headers: { ...p.pk, authorization: `Bearer ${fragmentToken(url)}` } });
    expect(me.json().data).toMatchObject({ email: 'gina@example.com', googleId: 'g-100' });
  });

  it('links by verified email', async () => {
    const { body } = await signup(s.env, p, { email: 'both@example.com' });
    s.google.nextUser = { sub: 'g-200', email: 'both@example.com', email_verified: true };
    const r = await runFlow(s.env.app, 'google', p);
    expect(r.redirect!.searchParams.get('linkedByEmail')).toBe('true');
    expect(r.redirect!.searchParams.get('userId')).toBe(body.data.user._id);
  });

  it('links a verified email the provider returns padded and in capitals', async () => {
    const { body } = await signup(s.env, p, { email: 'padded@example.com' });
    s.google.nextUser = { sub: 'g-210', email: '  Padded@Example.COM ', email_verified: true };
    const r = await runFlow(s.env.app, 'google', p);
    expect(r.redirect!.searchParams.get('linkedByEmail')).toBe('true');
    expect(r.redirect!.searchParams.get('userId')).toBe(body.data.user._id);
    const rows = await s.env.ctx.db.admin.selectFrom('app_users').select('email').where('project_id', '=', p.id).where('email', 'ilike', '%padded%').execute();
    expect(rows).toEqual([{ email: 'padded@example.com' }]);
  });

  it('an ID token for another audience is refused (error mentions the audience)', async () => {
    s.google.nextUser = { sub: 'g-300', email: 'aud@example.com', email_verified: true };
    s.google.audienceOverride = 'someone-else.apps.googleusercontent.com';
    try {
      const r = await runFlow(s.env.app, 'google', p);
      expect(r.redirect!.searchParams.get('error')).toMatch(/audience/);
      expect(await s.env.ctx.db.admin.selectFrom('app_users').select('id').where('email', '=', 'aud@example.com').executeTakeFirst()).toBeUndefined();
    } finally {
      s.google.audienceOverride = undefined;
    }
  });

  it('no email → error redirect; unverified email does not link', async () => {
    s.google.nextUser = { sub: 'g-400', email_verified: false };
    const none = await runFlow(s.env.app, 'google', p);
    expect(none.redirect!.searchParams.get('error')).toMatch(/did not return an email/);
    await signup(s.env, p, { email: 'taken@example.com' });
    s.google.nextUser = { sub: 'g-500', email: 'taken@example.com', email_verified: false };
    const unverified = await runFlow(s.env.app, 'google', p);
    expect(unverified.redirect!.searchParams.get('error')).toMatch(/not verified/);
  });
});
