/**
 * The auth hooks on a social first sign-in (fake GitHub): before-sign-up sees method 'social'
 * and the provider, refuses (an error redirect, no user) or enriches the new user; token-claims
 * puts its claims in the token the callback hands over. An existing user's sign-in does not run
 * before-sign-up again.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProject } from '../../helpers/fixtures.js';
import { createSocialEnv, fragmentToken, runFlow, socialProject, type SocialEnv } from '../social/helpers.js';

let s: SocialEnv;
let p: TestProject;

const deploy = (name: string, event: string, source: string) =>
  s.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/functions`, headers: p.owner.auth, payload: { name, kind: 'auth', trigger: { event }, source } });

beforeAll(async () => {
  s = await createSocialEnv();
  p = await socialProject(s);
  expect((await deploy('gate', 'before-sign-up', `export default (e) => {
    if (e.email.endsWith('@blocked.test')) throw new PlinthError('Closed', { status: 403, code: 'domain_closed' });
    return { data: { name: e.method + ':' + e.provider + ':' + e.data.name } };
  }`)).statusCode).toBe(201);
  expect((await deploy('claims', 'token-claims', `export default ({ user, method }) => ({ claims: { via: method, name: user.name } })`)).statusCode).toBe(201);
});
afterAll(() => s.close());

describe('auth hooks on social sign-in', () => {
  it('refuses a new user: an error redirect with the message, no user row', async () => {
    s.github.nextUser = { id: 7001, login: 'blocked', name: 'Blocked', emails: [{ email: 'someone@blocked.test', primary: true, verified: true }] };
    const r = await runFlow(s.env.app, 'github', p);
    expect(r.redirect!.searchParams.get('error')).toMatch(/Closed/);
    const row = await s.env.ctx.db.admin.selectFrom('app_users').select('id').where('project_id', '=', p.id).where('email', '=', 'someone@blocked.test').executeTakeFirst();
    expect(row).toBeUndefined();
  });

  it('enriches a new user, and the callback’s token carries the claims', async () => {
    s.github.nextUser = { id: 7002, login: 'octo', name: 'Octo Cat', emails: [{ email: 'octo@example.com', primary: true, verified: true }] };
    const r = await runFlow(s.env.app, 'github', p);
    expect(r.redirect!.searchParams.get('isNewUser')).toBe('true');
    const row = await s.env.ctx.db.admin.selectFrom('app_users').select('data').where('id', '=', r.redirect!.searchParams.get('userId')!).executeTakeFirstOrThrow();
    expect(row.data.name).toBe('social:github:Octo Cat');
    expect(decodeJwt(fragmentToken(r.redirect!)).claims).toEqual({ via: 'oauth', name: 'social:github:Octo Cat' });
    // Signing in again finds the user: before-sign-up does not run (the name stays).
    const again = await runFlow(s.env.app, 'github', p);
    expect(again.redirect!.searchParams.get('isNewUser')).toBe('false');
    const same = await s.env.ctx.db.admin.selectFrom('app_users').select('data').where('id', '=', r.redirect!.searchParams.get('userId')!).executeTakeFirstOrThrow();
    expect(same.data.name).toBe('social:github:Octo Cat');
  });
});
