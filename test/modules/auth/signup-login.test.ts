/** Sign-up and login (docs/wire-compatibility.md §2.1, §2.4, §2.5): shapes, cookies, validation, conflicts, preconditions. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { makeCollection, makeProject, USERS_FIELDS, type TestProject } from '../../helpers/fixtures.js';
import { authProject, authTestEnv, cookieOf, PASSWORD, signup, uniqueEmail } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ env, p } = await authTestEnv([...USERS_FIELDS, { key: 'age', type: 'Number' }, { key: 'nickname', type: 'String', required: false }]));
});
afterAll(() => env.close());

const login = (proj: TestProject, email: string, password: string, headers: Record<string, string> = {}) =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: { ...proj.pk, ...headers }, payload: { email, password } });

describe('POST /api/userAuth/signup', () => {
  it('creates the user (201) with user, accessToken, token alias, expiresIn and the refresh token in header mode', async () => {
    const email = uniqueEmail('Mixed');
    const { res, body } = await signup(env, p, { email: `  ${email.toUpperCase()} `, name: 'Ann', age: 31 });
    expect(res.statusCode).toBe(201);
    expect(body.success).toBe(true);
    expect(body.message).toBe('User registered successfully');
    const { user, accessToken, token, expiresIn, refreshToken } = body.data;
    expect(user).toMatchObject({ email: email.toLowerCase(), name: 'Ann', age: 31, emailVerified: false });
    expect(user._id).toMatch(/^[0-9a-f]{24}$/);
    expect(user.password).toBeUndefined();
    expect(token).toBe(accessToken);
    expect(expiresIn).toBe('15m');
    expect(refreshToken).toMatch(/^[0-9a-f]{32}\.[A-Za-z0-9_-]{43}$/);
    expect(res.headers['x-refresh-token']).toBe(refreshToken);
    const cookie = cookieOf(res)!;
    expect(cookie).toMatchObject({ value: refreshToken, httpOnly: true, path: '/api/userAuth', sameSite: 'Lax' });
    const row = await env.ctx.db.admin.selectFrom('app_users').selectAll().where('id', '=', user._id).executeTakeFirstOrThrow();
    expect(row.email).toBe(email.toLowerCase());
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const session = await env.ctx.db.admin.selectFrom('app_user_sessions').selectAll().where('user_id', '=', user._id).executeTakeFirstOrThrow();
    expect(session.token_hash).not.toContain(refreshToken.split('.')[1]);
  });

  it('without header mode the refresh token is only in the HttpOnly cookie', async () => {
    const { res, body } = await signup(env, p, {}, false);
    expect(res.statusCode).toBe(201);
    expect(body.data.refreshToken).toBeUndefined();
    expect(res.headers['x-refresh-token']).toBeUndefined();
    expect(cookieOf(res)).toMatchObject({ httpOnly: true });
  });

  it('409 for a taken email, whatever its case', async () => {
    const email = uniqueEmail();
    expect((await signup(env, p, { email })).res.statusCode).toBe(201);
    const again = await signup(env, p, { email: email.toUpperCase() });
    expect(again.res.statusCode).toBe(409);
    expect(again.body).toMatchObject({ success: false, message: 'User already exists with this email.' });
  });

  it.each([
    [{ email: undefined }, /email/i],
    [{ password: undefined }, /password/i],
    [{ email: 'not-an-email' }, 'Invalid email format.'],
    [{ password: '12345' }, 'Password must be at least 6 characters.'],
    [{ password: 'x'.repeat(101) }, 'Password is too long.'],
    [{ username: 'ab' }, 'Username must be between 3 and 50 characters.'],
    [{ age: 'old' }, "Field 'age' must be a Number."],
  ])('400 for bad input %j', async (patch, message) => {
    const { res, body } = await signup(env, p, patch);
    expect(res.statusCode).toBe(400);
    expect(body.message).toMatch(message);
  });

  it('never takes system fields from the body (no self-verification, no provider ids)', async () => {
    const { body } = await signup(env, p, { emailVerified: true, githubId: '1', _id: 'a'.repeat(24), $where: 'x', authProviders: ['github'] });
    expect(body.data.user.emailVerified).toBe(false);
    expect(body.data.user.githubId).toBeUndefined();
    expect(body.data.user._id).not.toBe('a'.repeat(24));
    expect(body.data.user.$where).toBeUndefined();
  });
});

describe('POST /api/userAuth/login', () => {
  it('200 with user, tokens and the cookie; email is matched case-insensitively', async () => {
    const email = uniqueEmail();
    await signup(env, p, { email, name: 'Bo' });
    const res = await login(p, email.toUpperCase(), PASSWORD, { 'x-refresh-token-mode': 'header' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.message).toBe('Login successful');
    expect(body.data.user).toMatchObject({ email, name: 'Bo' });
    expect(body.data.user.password).toBeUndefined();
    expect(body.data.accessToken).toBe(body.data.token);
    expect(body.data.refreshToken).toBe(res.headers['x-refresh-token']);
    expect(cookieOf(res)?.value).toBe(body.data.refreshToken);
  });

  it('401 with one message for a wrong password and for an unknown email', async () => {
    const email = uniqueEmail();
    await signup(env, p, { email });
    const wrong = await login(p, email, 'wrong password');
    const unknown = await login(p, uniqueEmail('nobody'), PASSWORD);
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json().message).toBe('Invalid email or password');
    expect(unknown.json()).toEqual(wrong.json());
  });

  it('400 when email or password is missing', async () => {
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email: 'a@b.co' } });
    expect(res.statusCode).toBe(400);
  });

  it('requireEmailVerification blocks unverified users with 403', async () => {
    const q = await authProject(env);
    await env.ctx.db.admin.updateTable('projects').set({ settings: JSON.stringify({ isAuthEnabled: true, requireEmailVerification: true }) as never }).where('id', '=', q.id).execute();
    env.ctx.projects.evictProject(q.id);
    const email = uniqueEmail();
    await signup(env, q, { email });
    const res = await login(q, email, PASSWORD);
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toMatch(/verify your email/);
  });
});

describe('preconditions (docs/wire-compatibility.md §2.1)', () => {
  it('403 when auth is disabled', async () => {
    const q = await authProject(env);
    await env.ctx.db.admin.updateTable('projects').set({ settings: JSON.stringify({ isAuthEnabled: false }) as never }).where('id', '=', q.id).execute();
    env.ctx.projects.evictProject(q.id);
    const { res } = await signup(env, q);
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toMatch(/enable Auth/);
  });

  it('403 without a users collection', async () => {
    const q = await makeProject(env.ctx);
    const { res } = await signup(env, q);
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toMatch(/User Schema Missing/);
  });

  it('422 when the users schema lacks a required String password', async () => {
    const q = await makeProject(env.ctx);
    await makeCollection(env.ctx, q.id, 'users', [{ key: 'email', type: 'String', required: true }, { key: 'password', type: 'String' }]);
    const { res } = await signup(env, q);
    expect(res.statusCode).toBe(422);
    expect(res.json().message).toMatch(/Invalid Users Schema/);
  });

  it('401 without an API key', async () => {
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', payload: { email: uniqueEmail(), password: PASSWORD } });
    expect(res.statusCode).toBe(401);
  });
});
