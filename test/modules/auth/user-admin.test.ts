/**
 * User administration (docs/auth.md "User administration"): the secret key and the project's
 * operator set any field of an end user, `readOnly` (a role) and `hidden` ones included, create
 * users (with or without a password, invited), set the email verified, list and search. The
 * threats: a publishable key or an end user's token reaching these routes or setting a
 * read-only field by any path; one project's secret key touching another project's users; the
 * password hash leaving. And the point of it all: a rule on `@auth.role` grants once the
 * administrator sets the role.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SystemMail } from '../../../src/context.js';
import type { TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, USERS_FIELDS, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from '../data/helpers.js';
import { authTestEnv, PASSWORD, signup, uniqueEmail } from './helpers.js';

const FIELDS = [
  ...USERS_FIELDS,
  { key: 'role', type: 'String', readOnly: true, default: 'reader' },
  { key: 'phone', type: 'String', hidden: 'owner' },
  { key: 'notes', type: 'String', hidden: 'secret' },
  { key: 'bio', type: 'String' },
] as typeof USERS_FIELDS;

let env: TestEnv;
let p: TestProject;
let mail: SystemMail[];
let A: ReturnType<typeof api>;
const ADMIN = '/api/userAuth/admin/users';

beforeAll(async () => {
  ({ env, p, mail } = await authTestEnv(FIELDS));
  A = api(env);
});
afterAll(() => env.close());

const create = (body: Record<string, unknown>, headers: Record<string, string> = p.sk) => A.post(ADMIN, headers, body);
const patch = (id: string, body: Record<string, unknown>, headers: Record<string, string> = p.sk) => A.patch(`${ADMIN}/${id}`, headers, body);
const login = (email: string, password = PASSWORD) =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: { ...p.pk, 'x-refresh-token-mode': 'header' }, payload: { email, password } });

describe('the secret key administers users', () => {
  it('creates a user with a role and hidden fields, and reads them back (never the password)', async () => {
    const email = uniqueEmail('made');
    const res = await create({ email, password: PASSWORD, emailVerified: true, data: { role: 'editor', phone: '+1 555', notes: 'vip', name: 'Made' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const user = res.body.data;
    expect(user).toMatchObject({ email, emailVerified: true, role: 'editor', phone: '+1 555', notes: 'vip', name: 'Made', disabled: false });
    expect(JSON.stringify(res.body)).not.toMatch(/password|argon2/i);
    const got = await A.get(`${ADMIN}/${user._id}`, p.sk);
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({ role: 'editor', phone: '+1 555', notes: 'vip' });
    expect(JSON.stringify(got.body)).not.toMatch(/argon2|password_hash/);
    // The hidden values are stored where the trigger puts them, not in `data`.
    const row = await env.ctx.db.admin.selectFrom('app_users').select(['data', 'private', 'secret']).where('id', '=', user._id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ data: { role: 'editor' }, private: { phone: '+1 555' }, secret: { notes: 'vip' } });
    expect((await login(email)).statusCode).toBe(200);
  });

  it('without a password the account has no usable one; the default of a readOnly field applies', async () => {
    const email = uniqueEmail('nopw');
    const res = await create({ email });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ role: 'reader', emailVerified: false });
    expect((await login(email, '')).statusCode).toBe(400);
    expect((await login(email, 'x'.repeat(12))).statusCode).toBe(401);
  });

  it('refuses a taken email, reserved keys, bad fields and an invitation with a password', async () => {
    const email = uniqueEmail('dup');
    expect((await create({ email })).status).toBe(201);
    const again = await create({ email: email.toUpperCase() });
    expect([again.status, again.body.code]).toEqual([409, 'email_taken']);
    for (const key of ['password', 'email', 'emailVerified', '_id', '$set', 'a.b']) {
      const r = await create({ email: uniqueEmail(), data: { [key]: 'x' } });
      expect([key, r.status, r.body.code]).toEqual([key, 400, 'user_field_reserved']);
    }
    const wrongType = await create({ email: uniqueEmail(), data: { bio: 42 } });
    expect([wrongType.status, wrongType.body.code]).toEqual([400, 'invalid_input']);
    const flat = await create({ email: uniqueEmail(), role: 'admin' });
    expect(flat.status).toBe(400);
    const both = await create({ email: uniqueEmail(), password: PASSWORD, invite: true });
    expect([both.status, both.body.code]).toEqual([400, 'invite_with_password']);
    expect((await create({ email: 'not an email' })).body.code).toBe('invalid_input');
  });

  it('updates readOnly and hidden fields, the email (unique, then unverified) and the verification', async () => {
    const { body } = await signup(env, p);
    const id = body.data.user._id as string;
    const taken = uniqueEmail('taken');
    await create({ email: taken });
    const res = await patch(id, { emailVerified: true, data: { role: 'admin', notes: 'watch', bio: null } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ role: 'admin', notes: 'watch', bio: null, emailVerified: true });
    const clash = await patch(id, { email: taken });
    expect([clash.status, clash.body.code]).toEqual([409, 'email_taken']);
    const fresh = uniqueEmail('moved');
    const moved = await patch(id, { email: ` ${fresh.toUpperCase()} ` });
    expect(moved.body.data).toMatchObject({ email: fresh, emailVerified: false, role: 'admin' });
    expect((await patch(id, { email: fresh, emailVerified: true })).body.data.emailVerified).toBe(true);
    expect((await patch(id, { data: { role: 7 } })).body.code).toBe('invalid_input');
    expect((await patch('f'.repeat(24), { data: { role: 'x' } })).status).toBe(404);
    expect((await patch('nope', {})).status).toBe(400);
  });

  it('a new password signs in and revokes the sessions', async () => {
    const { body } = await signup(env, p);
    const refresh = await env.app.inject({ method: 'POST', url: '/api/userAuth/refresh-token', headers: { ...p.pk, 'x-refresh-token': body.data.refreshToken, 'x-refresh-token-mode': 'header' } });
    expect(refresh.statusCode).toBe(200);
    const next = 'brand new pass 9';
    expect((await patch(body.data.user._id, { password: next })).status).toBe(200);
    expect((await login(body.data.user.email, next)).statusCode).toBe(200);
    expect((await login(body.data.user.email)).statusCode).toBe(401);
    const replay = await env.app.inject({ method: 'POST', url: '/api/userAuth/refresh-token', headers: { ...p.pk, 'x-refresh-token': refresh.json().data.refreshToken, 'x-refresh-token-mode': 'header' } });
    expect(replay.statusCode).toBe(403);
  });

  it('keeps non-ASCII and long values as given', async () => {
    const name = 'Zoë Ångström 北京 🚀';
    const bio = 'ß∂ƒ©'.repeat(2_500);
    const email = uniqueEmail('jürgen');
    const res = await create({ email, data: { name, bio, notes: '秘密' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const got = await A.get(`${ADMIN}/${res.body.data._id}`, p.sk);
    expect(got.body.data).toMatchObject({ email, name, bio, notes: '秘密' });
    const found = await A.get(`${ADMIN}?q=${encodeURIComponent('Ångström 北京')}`, p.sk);
    expect(found.body.data.items.map((u: { _id: string }) => u._id)).toEqual([res.body.data._id]);
  });

  it('lists newest first, searches text and filters by email prefix', async () => {
    const tag = `pre${Date.now().toString(36)}`;
    const a = await create({ email: `${tag}a@example.com` });
    env.clock.advance(1000);
    const b = await create({ email: `${tag}b@example.com`, data: { name: `Name ${tag}` } });
    const byPrefix = await A.get(`${ADMIN}?email=${tag.toUpperCase()}&limit=10`, p.sk);
    expect(byPrefix.status).toBe(200);
    expect(byPrefix.body.data).toMatchObject({ total: 2, page: 1, limit: 10 });
    expect(byPrefix.body.data.items.map((u: { _id: string }) => u._id)).toEqual([b.body.data._id, a.body.data._id]);
    // A prefix is a prefix: the middle of an address does not match, nor do LIKE wildcards.
    expect((await A.get(`${ADMIN}?email=${tag.slice(1)}`, p.sk)).body.data.total).toBe(0);
    expect((await A.get(`${ADMIN}?email=%25`, p.sk)).body.data.total).toBe(0);
    const page2 = await A.get(`${ADMIN}?email=${tag}&limit=1&page=2`, p.sk);
    expect(page2.body.data.items.map((u: { _id: string }) => u._id)).toEqual([a.body.data._id]);
    expect((await A.get(`${ADMIN}?q=Name%20${tag}`, p.sk)).body.data.total).toBe(1);
    expect((await A.get(`${ADMIN}?limit=1000`, p.sk)).status).toBe(400);
  });
});

describe('who may not', () => {
  let userId: string;
  let token: string;
  beforeAll(async () => {
    const { body } = await signup(env, p);
    userId = body.data.user._id;
    token = body.data.accessToken;
  });

  it('the publishable key, with or without a user token, reaches none of the routes (403), and no key is 401', async () => {
    const asUser = { ...p.pk, authorization: `Bearer ${token}` };
    for (const headers of [p.pk, asUser]) {
      expect((await A.get(ADMIN, headers)).status).toBe(403);
      expect((await A.get(`${ADMIN}/${userId}`, headers)).status).toBe(403);
      expect((await create({ email: uniqueEmail(), data: { role: 'admin' } }, headers)).status).toBe(403);
      expect((await patch(userId, { data: { role: 'admin' } }, headers)).status).toBe(403);
    }
    expect((await A.get(ADMIN, {})).status).toBe(401);
    // Nor does an operator's dashboard token count as a key.
    expect((await A.get(ADMIN, p.owner.auth)).status).toBe(401);
    const row = await env.ctx.db.admin.selectFrom('app_users').select('data').where('id', '=', userId).executeTakeFirstOrThrow();
    expect(row.data).toMatchObject({ role: 'reader' });
  });

  it('an end user still cannot set their role: update-profile and sign-up refuse it', async () => {
    const asUser = { ...p.pk, authorization: `Bearer ${token}` };
    const res = await env.app.inject({ method: 'PUT', url: '/api/userAuth/update-profile', headers: asUser, payload: { role: 'admin' } });
    expect([res.statusCode, res.json().code]).toEqual([403, 'field_read_only']);
    const su = await signup(env, p, { role: 'admin' });
    expect(su.res.statusCode).toBe(403);
  });

  it("one project's secret key cannot see or change another project's users", async () => {
    const other = await makeProject(env.ctx);
    await createCollection(env, other, 'users', FIELDS);
    expect((await A.get(`${ADMIN}/${userId}`, other.sk)).status).toBe(404);
    expect((await patch(userId, { data: { role: 'admin' } }, other.sk)).status).toBe(404);
    expect((await A.get(`${ADMIN}?q=${userId}`, other.sk)).body.data.total).toBe(0);
    // The same email may exist in both projects: uniqueness is per project.
    const email = (await A.get(`${ADMIN}/${userId}`, p.sk)).body.data.email;
    expect((await create({ email }, other.sk)).status).toBe(201);
    expect((await A.get(`${ADMIN}/${userId}`, p.sk)).body.data.role).toBe('reader');
  });
});

describe('a role set by the administrator is what rules see', () => {
  it('@auth.role: refused before, granted on the next request after the role is set', async () => {
    await createCollection(env, p, 'articles', [{ key: 'title', type: 'String' }]);
    const rules = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/articles/rules`, headers: p.owner.auth, payload: { list: 'true', create: '@auth.role in ["editor", "admin"]' } });
    expect(rules.statusCode, rules.body).toBe(200);
    const { body } = await signup(env, p);
    const asUser = { ...p.pk, authorization: `Bearer ${body.data.accessToken}` };
    expect((await A.post('/api/data/articles', asUser, { title: 'before' })).status).toBe(403);
    expect((await patch(body.data.user._id, { data: { role: 'editor' } })).status).toBe(200);
    expect((await A.post('/api/data/articles', asUser, { title: 'after' })).status).toBe(201);
    // And through the console's route: demoted again, refused again.
    const demote = await A.patch(`/api/projects/${p.id}/users/${body.data.user._id}`, p.owner.auth, { data: { role: 'reader' } });
    expect(demote.status).toBe(200);
    expect((await A.post('/api/data/articles', asUser, { title: 'again' })).status).toBe(403);
  });
});

describe('the dashboard: the same service for the project owner', () => {
  const base = () => `/api/projects/${p.id}/users`;

  it('creates, reads and updates (readOnly and hidden fields included); a stranger gets 404', async () => {
    const email = uniqueEmail('console');
    const made = await A.post(base(), p.owner.auth, { email, data: { role: 'editor', notes: 'from the console' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.data._id;
    const got = await A.get(`${base()}/${id}`, p.owner.auth);
    expect(got.body.data).toMatchObject({ email, role: 'editor', notes: 'from the console', disabled: false });
    const upd = await A.patch(`${base()}/${id}`, p.owner.auth, { emailVerified: true, data: { role: 'admin', phone: '+33 1' } });
    expect(upd.body.data).toMatchObject({ role: 'admin', phone: '+33 1', emailVerified: true });
    const list = await A.get(`${base()}?email=${encodeURIComponent(email)}`, p.owner.auth);
    expect(list.body.data.items).toHaveLength(1);
    expect(list.body.data.items[0]).toMatchObject({ role: 'admin', notes: 'from the console' });
    const stranger = await makeOperator(env.ctx);
    expect((await A.get(`${base()}/${id}`, stranger.auth)).status).toBe(404);
    expect((await A.patch(`${base()}/${id}`, stranger.auth, { data: { role: 'x' } })).status).toBe(404);
    expect((await A.post(base(), stranger.auth, { email: uniqueEmail() })).status).toBe(404);
    // A publishable or secret key is no dashboard credential.
    expect((await A.patch(`${base()}/${id}`, p.sk, { data: { role: 'x' } })).status).toBe(401);
  });
});

describe('the request log', () => {
  it("keeps the secret key's administration calls like any API call (routed route, status, code)", async () => {
    const made = await create({ email: uniqueEmail('logged') });
    await patch(made.body.data._id, { data: { role: 9 } });
    const res = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/logs/requests?route=${encodeURIComponent('/api/userAuth/admin/users/:userId')}&limit=200`, headers: p.owner.auth });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().data.items as Array<{ method: string; route: string; status: number; code: string | null }>;
    expect(items.find((i) => i.method === 'PATCH' && i.status === 400)).toMatchObject({ route: '/api/userAuth/admin/users/:userId', code: 'invalid_input' });
    const posts = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/logs/requests?route=${encodeURIComponent(ADMIN)}&method=POST&limit=200`, headers: p.owner.auth });
    expect(posts.json().data.items.some((i: { status: number }) => i.status === 201)).toBe(true);
  });
});

// Last: it moves the clock past the dashboard tokens' lifetime.
describe('invitations', () => {
  it('invite: true mails a sign-in link that signs the new user in (and verifies the email)', async () => {
    const email = uniqueEmail('invited');
    const res = await create({ email, invite: true, data: { role: 'editor' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const sent = mail.filter((m) => m.to === email);
    expect(sent.map((m) => m.tag)).toEqual(['auth.invite']);
    const token = /[#&]token=([A-Za-z0-9_-]+)/.exec(sent[0]!.text ?? '')?.[1];
    expect(token).toBeTruthy();
    expect(sent[0]!.text).toContain('1440');
    env.clock.advance(60 * 60 * 1000); // an hour later: still valid (a sign-in request's would not be)
    const signIn = await env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/verify', headers: { ...p.pk, 'x-refresh-token-mode': 'header' }, payload: { token } });
    expect(signIn.statusCode, signIn.body).toBe(200);
    expect(signIn.json().data.user).toMatchObject({ _id: res.body.data._id, emailVerified: true, role: 'editor' });
  });
});
