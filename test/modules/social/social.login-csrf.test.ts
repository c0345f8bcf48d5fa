/**
 * Threat: login CSRF through the OAuth callback. An attacker starts a social sign-in, consents
 * with their own provider account, and gets a victim's browser to open the callback URL: the
 * victim would be signed into the attacker's account (and whatever they then store lands
 * there). The state is now bound to the browser that started the flow by a short-lived
 * HttpOnly cookie; a callback without it, or with another flow's cookie, is the documented error
 * redirect, and the state is spent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProject } from '../../helpers/fixtures.js';
import { createSocialEnv, jarOf, runFlow, socialProject, type SocialEnv } from './helpers.js';

let s: SocialEnv;
let p: TestProject;

beforeAll(async () => {
  s = await createSocialEnv();
  p = await socialProject(s);
  s.github.nextUser = { id: 31337, login: 'attacker', emails: [{ email: 'attacker@example.com', primary: true, verified: true }] };
});
afterAll(() => s.close());

const start = () => s.env.app.inject({ method: 'GET', url: `/api/userAuth/social/github/start?key=${p.publishableKey}` });

describe('OAuth state bound to the starting browser', () => {
  it('/start sets a short-lived HttpOnly, SameSite=Lax cookie for the social routes only', async () => {
    const res = await start();
    const cookie = res.cookies.find((c) => c.name.startsWith('oauth_'));
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/api/userAuth/social', maxAge: 600 });
    expect(cookie!.value.length).toBeGreaterThanOrEqual(43);
    const row = await s.env.ctx.db.admin.selectFrom('social_states').select('browser_hash').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(row.browser_hash).not.toBe(cookie!.value);
  });

  it('a callback opened in another browser (no cookie) is an error redirect; nothing is signed in', async () => {
    const r = await runFlow(s.env.app, 'github', p, s.env.app, 'key', {});
    expect(r.status).toBe(302);
    expect(r.redirect!.origin + r.redirect!.pathname).toBe('http://localhost:5173/auth/callback');
    expect(r.redirect!.searchParams.get('error')).toBe('OAuth state mismatch');
    expect(r.redirect!.searchParams.get('rtCode')).toBeNull();
    expect(r.cookies.find((c) => c.name === 'refreshToken')).toBeUndefined();
    const replay = await s.env.app.inject({ method: 'GET', url: r.callbackPath });
    expect(replay.statusCode).toBe(400); // the state is spent
  });

  it("a callback carrying another flow's cookie is refused the same way", async () => {
    const victimsOwn = jarOf(await start()); // the victim's browser has its own flow's cookie
    const r = await runFlow(s.env.app, 'github', p, s.env.app, 'key', victimsOwn);
    expect(r.redirect!.searchParams.get('error')).toBe('OAuth state mismatch');
  });

  it('a forged cookie value under the right name is refused', async () => {
    const r = await runFlow(s.env.app, 'github', p, s.env.app, 'key', undefined);
    expect(r.redirect!.searchParams.get('rtCode')).toBeTruthy(); // the real browser succeeds…
    const first = await start();
    const [name] = Object.keys(jarOf(first));
    const consent = await fetch(first.headers.location as string, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location')!);
    const res = await s.env.app.inject({ method: 'GET', url: back.pathname + back.search, cookies: { [name!]: 'A'.repeat(43) } });
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('OAuth state mismatch'); // …a forged key does not
  });

  it('the starting browser signs in, and its state cookie is cleared', async () => {
    const r = await runFlow(s.env.app, 'github', p);
    expect(r.redirect!.searchParams.get('error')).toBeNull();
    expect(r.redirect!.searchParams.get('rtCode')).toBeTruthy();
    const cleared = r.cookies.find((c) => c.name.startsWith('oauth_'));
    expect(cleared?.value).toBe('');
  });
});
