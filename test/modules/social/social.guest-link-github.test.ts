/**
 * A guest links a GitHub identity (a column of app_users, not an OpenID Connect identity) to its
 * own user id, against the fake GitHub (docs/auth.md "Anonymous users"); the threat: a GitHub
 * account that already belongs to another user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signOperatorToken } from '../../../src/modules/operators/tokens.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { bearer } from '../mfa/helpers.js';
import { createSocialEnv, runFlow, socialProject, type SocialEnv } from './helpers.js';

let s: SocialEnv;
let p: TestProject;

beforeAll(async () => {
  s = await createSocialEnv();
  p = await socialProject(s);
  const auth = { authorization: `Bearer ${await signOperatorToken(s.env.ctx.config.dashboardJwtSecret, p.owner.id, s.env.clock.now())}` };
  expect((await s.env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}`, headers: auth, payload: { allowAnonymous: true } })).statusCode).toBe(200);
});
afterAll(() => s.close());

async function guestLinksGithub() {
  const g = (await s.env.app.inject({ method: 'POST', url: '/api/userAuth/anonymous', headers: p.pk })).json().data;
  const start = await s.env.app.inject({ method: 'POST', url: '/api/userAuth/social/github/link', headers: bearer(p, g.accessToken) });
  expect(start.statusCode, start.body).toBe(200);
  const consent = await fetch(start.json().data.url, { redirect: 'manual' });
  const back = new URL(consent.headers.get('location')!);
  const cb = await s.env.app.inject({ method: 'GET', url: back.pathname + back.search });
  const site = new URL(cb.headers.location as string);
  expect(site.searchParams.get('link')).toBe('github');
  const res = await s.env.app.inject({
    method: 'POST', url: '/api/userAuth/social/github/link/finish', headers: bearer(p, g.accessToken),
    payload: { state: site.searchParams.get('state'), code: site.searchParams.get('code') },
  });
  return { g, res };
}

const row = (id: string) =>
  s.env.ctx.db.admin.selectFrom('app_users').select(['email', 'email_verified', 'github_id', 'is_anonymous', 'auth_providers']).where('id', '=', id).executeTakeFirstOrThrow();

describe('a guest links GitHub', () => {
  it('the same user id gets the GitHub id and verified email, and GitHub sign-in then lands in it', async () => {
    s.github.nextUser = { id: 7001, login: 'guesty', name: 'Guesty', emails: [{ email: 'guesty@example.com', primary: true, verified: true }] };
    const { g, res } = await guestLinksGithub();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.user).toMatchObject({ _id: g.user._id, email: 'guesty@example.com', isAnonymous: false });
    expect(await row(g.user._id)).toMatchObject({ email: 'guesty@example.com', email_verified: true, github_id: '7001', is_anonymous: false, auth_providers: ['github'] });
    const signIn = await runFlow(s.env.app, 'github', p);
    expect(signIn.redirect!.searchParams.get('userId')).toBe(g.user._id);
  });

  it('takeover: a GitHub account that belongs to another user is refused; the guest stays a guest', async () => {
    s.github.nextUser = { id: 7002, login: 'owner', emails: [{ email: 'gh-owner@example.com', primary: true, verified: true }] };
    const owner = await runFlow(s.env.app, 'github', p);
    const ownerId = owner.redirect!.searchParams.get('userId')!;
    const { g, res } = await guestLinksGithub();
    expect([res.statusCode, res.json().code]).toEqual([409, 'identity_taken']);
    expect(await row(g.user._id)).toMatchObject({ email: null, github_id: null, is_anonymous: true });
    expect(await row(ownerId)).toMatchObject({ github_id: '7002' });
  });
});
