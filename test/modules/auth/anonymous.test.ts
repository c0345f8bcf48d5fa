/**
 * Anonymous (guest) users (docs/auth.md "Anonymous users"): guest sign-in, linking an email and
 * password or a passkey to the same user id (keeping the guest's documents), the threats of
 * linking, the per-address limit and the clean-up of unused guests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SystemMail } from '../../../src/context.js';
import { removeUnusedAnonymousUsers } from '../../../src/modules/auth/anonymous-cleanup.js';
import { signOperatorToken } from '../../../src/modules/operators/tokens.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeCollection, type TestProject } from '../../helpers/fixtures.js';
import { SoftAuthenticator } from '../../helpers/webauthn.js';
import { bearer, claimsOf } from '../mfa/helpers.js';
import { authProject, authTestEnv, captureMail, lastCode, PASSWORD, refresh, signup, uniqueEmail } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let mail: SystemMail[];
const ORIGIN = 'https://app.example.com';

const ownerAuth = (proj: TestProject, e = env) => signOperatorToken(e.ctx.config.dashboardJwtSecret, proj.owner.id, e.clock.now()).then((t) => ({ authorization: `Bearer ${t}` }));
const patch = async (proj: TestProject, payload: Record<string, unknown>, e = env) =>
  e.app.inject({ method: 'PATCH', url: `/api/projects/${proj.id}`, headers: await ownerAuth(proj, e), payload });

beforeAll(async () => {
  ({ env, mail, p } = await authTestEnv());
  expect((await patch(p, { allowAnonymous: true, passkeys: { rpId: 'example.com', origins: [ORIGIN] } })).statusCode).toBe(200);
  await makeCollection(env.ctx, p.id, 'notes', [{ key: 'text', type: 'String' }], { enabled: true, mode: 'private' });
});
afterAll(() => env.close());

const guest = async (proj = p, ip = '10.8.0.1') => {
  const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/anonymous', headers: { ...proj.pk, 'x-refresh-token-mode': 'header' }, remoteAddress: ip });
  return { res, data: res.json().data };
};
const linkEmail = (token: string, payload: Record<string, unknown>, proj = p) =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/anonymous/link-email', headers: bearer(proj, token), payload });
const note = (token: string, text: string) => env.app.inject({ method: 'POST', url: '/api/data/notes', headers: bearer(p, token), payload: { text } });
const myNotes = async (token: string) => (await env.app.inject({ method: 'GET', url: '/api/data/notes', headers: bearer(p, token) })).json().data.items;

describe('guest sign-in', () => {
  it('is refused unless the project allows it', async () => {
    const q = await authProject(env);
    const { res } = await guest(q);
    expect([res.statusCode, res.json().code]).toEqual([403, 'anonymous_disabled']);
    expect((await patch(q, {})).json().data.signIn).toEqual({ allowSignup: true, allowAnonymous: false, redirectUrls: [] });
  });

  it('returns normal tokens for a user with no email, marked anonymous in the record and the token', async () => {
    const { res, data } = await guest();
    expect(res.statusCode).toBe(201);
    expect(data.user).toMatchObject({ email: null, isAnonymous: true, emailVerified: false });
    expect(claimsOf(data.accessToken)).toMatchObject({ isAnonymous: true, amr: [{ method: 'anonymous' }], aal: 'aal1' });
    const row = await env.ctx.db.admin.selectFrom('app_users').select(['email', 'is_anonymous']).where('id', '=', data.user._id).executeTakeFirstOrThrow();
    expect(row).toEqual({ email: null, is_anonymous: true });
    const refreshed = await refresh(env, p, data.refreshToken);
    expect(claimsOf(refreshed.json().data.accessToken).isAnonymous).toBe(true);
    const me = await env.app.inject({ method: 'GET', url: '/api/userAuth/me', headers: bearer(p, data.accessToken) });
    expect(me.json().data).toMatchObject({ _id: data.user._id, isAnonymous: true });
  });

  it('is limited per address', async () => {
    const limited = await createTestEnv();
    captureMail(limited);
    const lp = await authProject(limited);
    try {
      expect((await patch(lp, { allowAnonymous: true }, limited)).statusCode).toBe(200);
      const post = (ip: string) => limited.app.inject({ method: 'POST', url: '/api/userAuth/anonymous', headers: lp.pk, remoteAddress: ip });
      for (let i = 0; i < 30; i++) expect((await post('10.8.1.1')).statusCode).toBe(201);
      const res = await post('10.8.1.1');
      expect(res.statusCode).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect((await post('10.8.1.2')).statusCode).toBe(201);
    } finally {
      await limited.close();
    }
  });
});

describe('linking', () => {
  it('a guest links an email and password and keeps its user id and documents', async () => {
    const { data } = await guest();
    expect((await note(data.accessToken, 'from the guest')).statusCode).toBe(201);
    const email = uniqueEmail('linked');
    const res = await linkEmail(data.accessToken, { email, password: PASSWORD });
    expect(res.statusCode).toBe(200);
    const linked = res.json().data;
    expect(linked.user).toMatchObject({ _id: data.user._id, email, isAnonymous: false, emailVerified: false });
    expect(claimsOf(linked.accessToken)).toMatchObject({ userId: data.user._id, isAnonymous: false });
    // The guest's refresh token goes on, now for a user who is not anonymous.
    expect(claimsOf((await refresh(env, p, data.refreshToken)).json().data.accessToken).isAnonymous).toBe(false);
    // A verification code was mailed, as at sign-up; the email and password now sign in to the same user.
    expect(lastCode(mail, email, 'auth.verify-email')).toMatch(/^\d{6}$/);
    const login = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email, password: PASSWORD } });
    expect(login.json().data.user._id).toBe(data.user._id);
    const notes = await myNotes(login.json().data.accessToken);
    expect(notes.map((n: { text: string }) => n.text)).toEqual(['from the guest']);
    // Linking again is refused: the user is no longer a guest.
    const again = await linkEmail(linked.accessToken, { email: uniqueEmail(), password: PASSWORD });
    expect([again.statusCode, again.json().code]).toEqual([409, 'user_not_anonymous']);
  });

  it("takeover: a guest linking the email of someone else's account is refused, and that account is untouched", async () => {
    const { body } = await signup(env, p);
    const victim = body.data.user.email;
    const { data } = await guest();
    for (const email of [victim, victim.toUpperCase()]) {
      const res = await linkEmail(data.accessToken, { email, password: 'attacker pass' });
      expect([res.statusCode, res.json().code]).toEqual([409, 'email_taken']);
    }
    const row = await env.ctx.db.admin.selectFrom('app_users').select(['email', 'is_anonymous']).where('id', '=', data.user._id).executeTakeFirstOrThrow();
    expect(row).toEqual({ email: null, is_anonymous: true });
    const victimLogin = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email: victim, password: PASSWORD } });
    expect(victimLogin.json().data.user._id).toBe(body.data.user._id);
    const attacker = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email: victim, password: 'attacker pass' } });
    expect(attacker.statusCode).toBe(401);
    // A user who is not a guest cannot use the guest route to change their email either.
    const other = await linkEmail(body.data.accessToken, { email: uniqueEmail(), password: PASSWORD });
    expect(other.json().code).toBe('user_not_anonymous');
  });

  it('a guest links a passkey: no longer anonymous, signs back in with it to the same user id and documents', async () => {
    const { data } = await guest();
    expect((await note(data.accessToken, 'passkey guest')).statusCode).toBe(201);
    const auth = new SoftAuthenticator(ORIGIN);
    const options = (await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/register/options', headers: bearer(p, data.accessToken) })).json().data;
    const reg = await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/register', headers: bearer(p, data.accessToken), payload: { name: 'Guest key', response: auth.register(options) } });
    expect(reg.statusCode).toBe(200);
    expect(claimsOf(reg.json().data.accessToken).isAnonymous).toBe(false);
    const signinOptions = (await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/signin/options', headers: p.pk })).json().data;
    const signin = await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/signin', headers: p.pk, payload: { response: auth.assert(signinOptions) } });
    expect(signin.statusCode).toBe(200);
    expect(signin.json().data.user).toMatchObject({ _id: data.user._id, isAnonymous: false });
    expect((await myNotes(signin.json().data.accessToken)).map((n: { text: string }) => n.text)).toEqual(['passkey guest']);
  });
});

describe('linking a passkey: threats', () => {
  it("takeover: a guest registering a passkey under the credential id of another user's passkey is refused; the guest stays a guest and the passkey signs in to its owner", async () => {
    const { body } = await signup(env, p);
    const owner = new SoftAuthenticator(ORIGIN);
    const ownerOptions = (await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/register/options', headers: bearer(p, body.data.accessToken) })).json().data;
    const ownerReg = await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/register', headers: bearer(p, body.data.accessToken), payload: { name: 'Owner key', response: owner.register(ownerOptions) } });
    expect(ownerReg.statusCode).toBe(200);
    const { data } = await guest();
    const attacker = new SoftAuthenticator(ORIGIN);
    const options = (await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/register/options', headers: bearer(p, data.accessToken) })).json().data;
    const reg = await env.app.inject({
      method: 'POST', url: '/api/userAuth/passkeys/register', headers: bearer(p, data.accessToken),
      payload: { name: 'Same id', response: attacker.register(options, { id: owner.credentials[0]!.id }) },
    });
    expect([reg.statusCode, reg.json().code]).toEqual([400, 'passkey_invalid']);
    const row = await env.ctx.db.admin.selectFrom('app_users').select(['is_anonymous']).where('id', '=', data.user._id).executeTakeFirstOrThrow();
    expect(row.is_anonymous).toBe(true);
    // The attacker's key under that id signs in to nobody; the owner's still signs in to the owner.
    const opts = async () => (await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/signin/options', headers: p.pk })).json().data;
    const forged = await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/signin', headers: p.pk, payload: { response: attacker.assert(await opts()) } });
    expect(forged.statusCode).toBe(400);
    const real = await env.app.inject({ method: 'POST', url: '/api/userAuth/passkeys/signin', headers: p.pk, payload: { response: owner.assert(await opts()) } });
    expect(real.json().data.user._id).toBe(body.data.user._id);
  });
});

describe('clean-up of unused guests', () => {
  it('removes old guests nobody can sign in as and who own nothing; keeps the rest', async () => {
    const q = await authProject(env);
    expect((await patch(q, { allowAnonymous: true })).statusCode).toBe(200);
    const unused = (await guest(q)).data;
    const withNote = (await guest()).data;
    expect((await note(withNote.accessToken, 'keep me')).statusCode).toBe(201);
    const active = (await guest(q)).data;
    const { body: member } = await signup(env, q);
    // 31 days later: every guest's refresh token (7 days) has expired, except the one refreshed now.
    env.clock.advance(31 * 86_400_000);
    const stillHere = await env.ctx.db.admin.updateTable('app_user_sessions').set({ expires_at: new Date(env.clock.now().getTime() + 86_400_000), last_used_at: env.clock.now() })
      .where('user_id', '=', active.user._id).where('used_at', 'is', null).executeTakeFirst();
    expect(Number(stillHere.numUpdatedRows)).toBe(1);
    expect(await removeUnusedAnonymousUsers(env.ctx)).toBeGreaterThanOrEqual(1);
    const left = await env.ctx.db.admin.selectFrom('app_users').select('id')
      .where('id', 'in', [unused.user._id, withNote.user._id, active.user._id, member.data.user._id]).execute();
    expect(left.map((r) => r.id).sort()).toEqual([withNote.user._id, active.user._id, member.data.user._id].sort());
    env.clock.advance(-31 * 86_400_000);
  });

  it('runs from the worker crontab', async () => {
    const { CRONTAB, buildTaskList } = await import('../../../src/worker/tasks.js');
    expect(CRONTAB).toMatch(/ auth:delete_unused_anonymous$/m);
    expect(CRONTAB).toMatch(/ auth:delete_expired_passwordless$/m);
    const tasks = buildTaskList(env.ctx);
    await tasks['auth:delete_unused_anonymous']!({}, {} as never);
    await tasks['auth:delete_expired_passwordless']!({}, {} as never);
  });
});
