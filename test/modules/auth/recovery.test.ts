/**
 * Profile and recovery (docs/wire-compatibility.md §2.6–§2.14): me, update-profile, change-password, public
 * profile, email verification and password reset by OTP (hashed, 10 min, 5 attempts).
 */
import { sql } from 'kysely';
import type { SystemMail } from '../../../src/context.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { USERS_FIELDS, type TestProject } from '../../helpers/fixtures.js';
import { authProject, authTestEnv, lastCode, PASSWORD, refresh, signup, uniqueEmail } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let mail: SystemMail[];

beforeAll(async () => {
  ({ env, mail, p } = await authTestEnv([...USERS_FIELDS, { key: 'age', type: 'Number' }, { key: 'apiSecret', type: 'String' }]));
});
afterAll(() => env.close());

const post = (url: string, payload: Record<string, unknown>) => env.app.inject({ method: 'POST', url, headers: p.pk, payload });
const put = (url: string, token: string, payload: Record<string, unknown>) =>
  env.app.inject({ method: 'PUT', url, headers: { ...p.pk, authorization: `Bearer ${token}` }, payload });

describe('me / update-profile / public profile', () => {
  it('me returns the user without password, not nested in data.user', async () => {
    const { body } = await signup(env, p, { name: 'Cy' });
    const res = await env.app.inject({ method: 'GET', url: '/api/userAuth/me', headers: { ...p.pk, authorization: `bearer ${body.data.accessToken}` } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ _id: body.data.user._id, name: 'Cy' });
    expect(res.json().data.password).toBeUndefined();
    const none = await env.app.inject({ method: 'GET', url: '/api/userAuth/me', headers: p.pk });
    expect([none.statusCode, none.json().message]).toEqual([401, 'Access Denied: No Token Provided']);
  });

  it('update-profile merges custom fields, ignores email/password/_id/$-keys and validates types', async () => {
    const { body } = await signup(env, p, { name: 'Dee' });
    const token = body.data.accessToken;
    const res = await put('/api/userAuth/update-profile', token, { name: 'Dee 2', age: 40, email: 'x@evil.com', password: 'pwned!!', $set: 1, emailVerified: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true, data: { message: 'Profile updated successfully' } });
    const row = await env.ctx.db.admin.selectFrom('app_users').selectAll().where('id', '=', body.data.user._id).executeTakeFirstOrThrow();
    expect(row.data).toMatchObject({ name: 'Dee 2', age: 40 });
    expect(row.email).toBe(body.data.user.email);
    expect(row.email_verified).toBe(false);
    expect((await put('/api/userAuth/update-profile', token, { age: 'forty' })).statusCode).toBe(400);
    expect((await put('/api/userAuth/update-profile', token, { username: 'x' })).statusCode).toBe(400);
  });

  it('public/:username exposes only safe fields', async () => {
    const username = `pub${Date.now().toString(36)}`;
    await signup(env, p, { username, name: 'Pub', apiSecret: 'hidden' });
    const res = await env.app.inject({ method: 'GET', url: `/api/userAuth/public/${username}`, headers: p.pk });
    expect(res.statusCode).toBe(200);
    const profile = res.json().data;
    expect(profile).toMatchObject({ username, name: 'Pub' });
    expect(Object.keys(profile).sort()).toEqual(['_id', 'createdAt', 'name', 'updatedAt', 'username']);
    expect((await env.app.inject({ method: 'GET', url: '/api/userAuth/public/nobody-here', headers: p.pk })).statusCode).toBe(404);
  });

  it("public/:username is 400 when the users schema has no 'username' field", async () => {
    const q = await authProject(env, USERS_FIELDS.filter((f) => f.key !== 'username'));
    const res = await env.app.inject({ method: 'GET', url: '/api/userAuth/public/anyone', headers: q.pk });
    expect([res.statusCode, res.json().message]).toEqual([400, "Public profile requires a 'username' field in users schema"]);
  });
});

describe('change-password', () => {
  it('checks the current password, then revokes every session', async () => {
    const { body } = await signup(env, p);
    const token = body.data.accessToken;
    const wrong = await put('/api/userAuth/change-password', token, { currentPassword: 'nope nope', newPassword: 'brand new 1' });
    expect([wrong.statusCode, wrong.json().message]).toEqual([400, 'Invalid current password']);
    const short = await put('/api/userAuth/change-password', token, { currentPassword: PASSWORD, newPassword: '123' });
    expect(short.statusCode).toBe(400);
    const ok = await put('/api/userAuth/change-password', token, { currentPassword: PASSWORD, newPassword: 'brand new 1' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().message).toBe('Password changed successfully');
    expect((await refresh(env, p, body.data.refreshToken)).statusCode).toBe(403);
    const login = await post('/api/userAuth/login', { email: body.data.user.email, password: 'brand new 1' });
    expect(login.statusCode).toBe(200);
  });
});

describe('email verification', () => {
  it('signup mails a 6-digit code (stored hashed); verify-email marks the user verified once', async () => {
    const email = uniqueEmail();
    const { body } = await signup(env, p, { email });
    const code = lastCode(mail, email, 'auth.verify-email');
    expect(JSON.stringify(body)).not.toContain(code);
    const stored = await env.ctx.db.admin.selectFrom('app_user_otps').selectAll().where('user_id', '=', body.data.user._id).executeTakeFirstOrThrow();
    expect(stored.code_hash).not.toContain(code);
    expect(stored.expires_at.getTime() - stored.sent_at.getTime()).toBe(600_000);
    const res = await post('/api/userAuth/verify-email', { email, otp: code });
    expect(res.statusCode).toBe(200);
    expect(res.json().message).toBe('Email verified successfully');
    const row = await env.ctx.db.admin.selectFrom('app_users').select('email_verified').where('email', '=', email).executeTakeFirstOrThrow();
    expect(row.email_verified).toBe(true);
    expect((await post('/api/userAuth/verify-email', { email, otp: code })).statusCode).toBe(400);
  });

  it('a sign-up whose verification code cannot be stored leaves no account behind (one transaction)', async () => {
    // A trigger of this project only makes storing the code fail, after the user and session rows were written.
    const fn = sql.raw(`test_fail_otp_${p.id}`);
    await sql`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF NEW.project_id = ${sql.lit(p.id)} THEN RAISE EXCEPTION 'code store unavailable'; END IF; RETURN NEW; END $$`.execute(env.ctx.db.admin);
    await sql`CREATE TRIGGER ${fn} BEFORE INSERT ON app_user_otps FOR EACH ROW EXECUTE FUNCTION ${fn}()`.execute(env.ctx.db.admin);
    const email = uniqueEmail();
    try {
      const { res } = await signup(env, p, { email });
      expect(res.statusCode).toBe(500);
    } finally {
      await sql`DROP TRIGGER ${fn} ON app_user_otps`.execute(env.ctx.db.admin);
      await sql`DROP FUNCTION ${fn}()`.execute(env.ctx.db.admin);
    }
    const users = await env.ctx.db.admin.selectFrom('app_users').select('id').where('email', '=', email).execute();
    expect(users).toEqual([]);
    expect(mail.some((m) => m.to === email)).toBe(false);
    const again = await signup(env, p, { email });
    expect(again.res.statusCode).toBe(201);
  });

  it('a code dies after 5 wrong attempts, even the right one after that', async () => {
    const email = uniqueEmail();
    await signup(env, p, { email });
    const code = lastCode(mail, email, 'auth.verify-email');
    const wrong = code === '111111' ? '222222' : '111111';
    for (let i = 0; i < 5; i++) {
      const r = await post('/api/userAuth/verify-email', { email, otp: wrong });
      expect([r.statusCode, r.json().message]).toEqual([400, 'Invalid or expired OTP']);
    }
    expect((await post('/api/userAuth/verify-email', { email, otp: code })).statusCode).toBe(400);
  });

  it('a code expires after 10 minutes', async () => {
    const email = uniqueEmail();
    await signup(env, p, { email });
    const code = lastCode(mail, email, 'auth.verify-email');
    env.clock.advance(10 * 60 * 1000 + 1);
    expect((await post('/api/userAuth/verify-email', { email, otp: code })).statusCode).toBe(400);
  });

  it('resend sends a new code that replaces the old one; a second resend within 60 s is 429', async () => {
    const email = uniqueEmail();
    await signup(env, p, { email });
    const old = lastCode(mail, email, 'auth.verify-email');
    const res = await post('/api/userAuth/resend-verification-otp', { email });
    expect(res.statusCode).toBe(200);
    const fresh = lastCode(mail, email, 'auth.verify-email');
    const again = await post('/api/userAuth/resend-verification-otp', { email });
    expect(again.statusCode).toBe(429);
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
    if (old !== fresh) expect((await post('/api/userAuth/verify-email', { email, otp: old })).statusCode).toBe(400);
    expect((await post('/api/userAuth/verify-email', { email, otp: fresh })).statusCode).toBe(200);
  });

  it('400 when the otp is not 6 digits', async () => {
    expect((await post('/api/userAuth/verify-email', { email: uniqueEmail(), otp: '12ab' })).statusCode).toBe(400);
  });
});

describe('password reset', () => {
  it('mails a reset code; reset-password sets the password and revokes all sessions', async () => {
    const email = uniqueEmail();
    const { body } = await signup(env, p, { email });
    const req = await post('/api/userAuth/request-password-reset', { email });
    expect(req.statusCode).toBe(200);
    expect(req.json().message).toBe('If that email exists, a reset code has been sent.');
    const code = lastCode(mail, email, 'auth.password-reset');
    const bad = await post('/api/userAuth/reset-password', { email, otp: code === '123456' ? '654321' : '123456', newPassword: 'reset pass 1' });
    expect(bad.statusCode).toBe(400);
    const res = await post('/api/userAuth/reset-password', { email, otp: code, newPassword: 'reset pass 1' });
    expect(res.statusCode).toBe(200);
    expect(res.json().message).toBe('Password updated successfully');
    expect((await refresh(env, p, body.data.refreshToken)).statusCode).toBe(403);
    expect((await post('/api/userAuth/login', { email, password: PASSWORD })).statusCode).toBe(401);
    expect((await post('/api/userAuth/login', { email, password: 'reset pass 1' })).statusCode).toBe(200);
    expect((await post('/api/userAuth/reset-password', { email, otp: code, newPassword: 'again pass 1' })).statusCode).toBe(400);
  });
});
