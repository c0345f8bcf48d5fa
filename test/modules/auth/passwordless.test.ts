/**
 * Passwordless sign-in by email (docs/auth.md "Passwordless by email"): a magic link and a
 * 6-digit code, each named after the threat it stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SystemMail } from '../../../src/context.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authProject, authTestEnv, captureMail, lastCode, PASSWORD, refresh, signup, uniqueEmail } from './helpers.js';
import { signOperatorToken } from '../../../src/modules/operators/tokens.js';
import { bearer, claimsOf, codeAt, enrolTotp } from '../mfa/helpers.js';

let env: TestEnv;
let p: TestProject;
let mail: SystemMail[];

beforeAll(async () => {
  ({ env, mail, p } = await authTestEnv());
});
afterAll(() => env.close());

const TAG = 'auth.passwordless';

const start = (payload: Record<string, unknown>, proj = p, ip = '10.9.0.1') =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/start', headers: proj.pk, remoteAddress: ip, payload });
const verify = (payload: Record<string, unknown>, proj = p, ip = '10.9.0.1') =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/verify', headers: { ...proj.pk, 'x-refresh-token-mode': 'header' }, remoteAddress: ip, payload });

function lastMail(to: string): SystemMail {
  const m = [...mail].reverse().find((x) => x.to === to && x.tag === TAG);
  if (!m) throw new Error(`no sign-in mail to ${to}`);
  return m;
}
/** The magic link of the last sign-in mail to `to`. */
const linkOf = (to: string) => new URL(/(https?:\/\/\S+)/.exec(lastMail(to).text ?? "")![1]!.replace(/\.$/, ''));
const tokenOf = (link: URL) => new URLSearchParams(link.hash.slice(1)).get('token')!;
/** The owner's dashboard token now (the tests move the clock past a token's lifetime). */
const ownerAuth = async (proj: TestProject) => ({ authorization: `Bearer ${await signOperatorToken(env.ctx.config.dashboardJwtSecret, proj.owner.id, env.clock.now())}` });
const mailsTo = (to: string) => mail.filter((m) => m.to === to && m.tag === TAG).length;

async function requestLink(email: string, extra: Record<string, unknown> = {}, proj = p) {
  env.clock.advance(61_000); // past the one-per-minute cooldown of the email
  const res = await start({ email, ...extra }, proj);
  expect(res.statusCode).toBe(200);
  return linkOf(email);
}

describe('signing in with a magic link or a code', () => {
  it('a new email gets an account by the link: verified, no password, tokens like login, the link opens the site URL', async () => {
    const email = uniqueEmail('pl');
    const link = await requestLink(email, { data: { name: 'Pia' } });
    expect(link.origin + link.pathname).toBe('http://localhost:5173/auth/callback');
    expect(link.search).toBe('');
    expect(new URLSearchParams(link.hash.slice(1)).get('type')).toBe('magiclink');
    // Nothing exists before the link is used.
    expect(await env.ctx.db.admin.selectFrom('app_users').select('id').where('email', '=', email).executeTakeFirst()).toBeUndefined();
    const res = await verify({ token: tokenOf(link) });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ isNewUser: true, user: { email, name: 'Pia', emailVerified: true, isAnonymous: false } });
    expect(claimsOf(data.accessToken)).toMatchObject({ aal: 'aal1', amr: [{ method: 'magiclink' }], isAnonymous: false });
    expect((await refresh(env, p, data.refreshToken)).statusCode).toBe(200);
    // The stored token is a hash, the code an HMAC: the table holds neither.
    const m = lastMail(email);
    expect(m.text).toContain(lastCode(mail, email, TAG));
  });

  it('an existing account signs in with the 6-digit code of the same mail', async () => {
    const { body } = await signup(env, p);
    const email = body.data.user.email;
    await requestLink(email);
    const res = await verify({ email, code: lastCode(mail, email, TAG) });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ isNewUser: false, user: { _id: body.data.user._id } });
    expect(claimsOf(res.json().data.accessToken).amr).toEqual([expect.objectContaining({ method: 'otp' })]);
  });

  it('the mail speaks the reader\'s language (Accept-Language) and carries both the link and the code', async () => {
    const email = 'lena@example.de';
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/start', headers: { ...p.pk, 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' }, remoteAddress: '10.9.0.7', payload: { email } });
    expect(res.statusCode).toBeLessThan(300);
    const m = lastMail(email);
    expect(m.subject).toMatch(/Anmeldelink/);
    expect(m.text).toMatch(/Oder gib diesen Code ein: \d{6}/);
    expect(linkOf(email).hash).toMatch(/token=/);
  });

  it('a user with a second factor gets the MFA challenge, not tokens', async () => {
    const { body } = await signup(env, p);
    const email = body.data.user.email;
    const e = await enrolTotp(env, p, body.data.accessToken);
    const confirm = await env.app.inject({ method: 'POST', url: '/api/userAuth/mfa/totp/confirm', headers: bearer(p, body.data.accessToken), payload: { code: codeAt(env, e.secret) } });
    expect(confirm.statusCode).toBe(200);
    const link = await requestLink(email);
    const res = await verify({ token: tokenOf(link) });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ mfaRequired: true, methods: ['totp', 'recovery_code'] });
    expect(res.json().data.accessToken).toBeUndefined();
    expect(res.headers['set-cookie']).toBeUndefined();
  });
});

describe('threats', () => {
  it('magic link reused: the second use is refused', async () => {
    const email = uniqueEmail('reuse');
    const token = tokenOf(await requestLink(email));
    expect((await verify({ token })).statusCode).toBe(200);
    const again = await verify({ token });
    expect([again.statusCode, again.json().code]).toEqual([400, 'passwordless_invalid']);
  });

  it('magic link used concurrently: exactly one sign-in', async () => {
    const { body } = await signup(env, p);
    const token = tokenOf(await requestLink(body.data.user.email));
    const results = await Promise.all(Array.from({ length: 8 }, () => verify({ token })));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
  });

  it('magic link expired: refused after 10 minutes, and so is its code', async () => {
    const { body } = await signup(env, p);
    const email = body.data.user.email;
    const token = tokenOf(await requestLink(email));
    const code = lastCode(mail, email, TAG);
    env.clock.advance(10 * 60_000 + 1000);
    expect((await verify({ email, code })).json().code).toBe('passwordless_invalid');
    const res = await verify({ token });
    expect([res.statusCode, res.json().code]).toEqual([400, 'passwordless_invalid']);
  });

  it('magic link used for another project: refused there, and still good in its own', async () => {
    const q = await authProject(env);
    const { body } = await signup(env, p);
    const email = body.data.user.email;
    const token = tokenOf(await requestLink(email));
    const elsewhere = await verify({ token }, q);
    expect([elsewhere.statusCode, elsewhere.json().code]).toEqual([400, 'passwordless_invalid']);
    // The same email in the other project: its code does not open this one.
    const code = lastCode(mail, email, TAG);
    expect((await verify({ email, code }, q)).statusCode).toBe(400);
    expect((await verify({ token })).statusCode).toBe(200);
  });

  it('magic link after the email changed: refused (the link belongs to the address, not the account)', async () => {
    const { body } = await signup(env, p);
    const email = body.data.user.email;
    const token = tokenOf(await requestLink(email));
    await env.ctx.db.admin.updateTable('app_users').set({ email: uniqueEmail('moved') }).where('id', '=', body.data.user._id).execute();
    const res = await verify({ token });
    expect([res.statusCode, res.json().code]).toEqual([400, 'passwordless_invalid']);
    // Nobody was created for the old address either.
    expect(await env.ctx.db.admin.selectFrom('app_users').select('id').where('email', '=', email).executeTakeFirst()).toBeUndefined();
  });

  it('a newer request replaces the older link and code', async () => {
    const { body } = await signup(env, p);
    const email = body.data.user.email;
    const old = tokenOf(await requestLink(email));
    const oldCode = lastCode(mail, email, TAG);
    const fresh = tokenOf(await requestLink(email));
    expect((await verify({ token: old })).statusCode).toBe(400);
    const freshCode = lastCode(mail, email, TAG);
    if (freshCode !== oldCode) expect((await verify({ email, code: oldCode })).statusCode).toBe(400);
    expect((await verify({ token: fresh })).statusCode).toBe(200);
  });

  it('code guessing: the fifth wrong code kills it, the right one no longer works', async () => {
    const { body } = await signup(env, p);
    const email = body.data.user.email;
    await requestLink(email);
    const code = lastCode(mail, email, TAG);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 5; i++) expect((await verify({ email, code: wrong }, p, `10.9.1.${i}`)).json().code).toBe('passwordless_invalid');
    expect((await verify({ email, code }, p, '10.9.1.9')).json().code).toBe('passwordless_invalid');
  });

  it('a sign-in code is not a verification or reset code, and those are not sign-in codes', async () => {
    const { body } = await signup(env, p);
    const email = body.data.user.email;
    const verifyCode = lastCode(mail, email, 'auth.verify-email');
    await requestLink(email);
    const signInCode = lastCode(mail, email, TAG);
    const asVerify = await env.app.inject({ method: 'POST', url: '/api/userAuth/verify-email', headers: p.pk, payload: { email, otp: signInCode } });
    const asReset = await env.app.inject({ method: 'POST', url: '/api/userAuth/reset-password', headers: p.pk, payload: { email, otp: signInCode, newPassword: 'taken over 1' } });
    if (signInCode !== verifyCode) expect(asVerify.statusCode).toBe(400);
    expect(asReset.statusCode).toBe(400);
    if (signInCode !== verifyCode) expect((await verify({ email, code: verifyCode })).json().code).toBe('passwordless_invalid');
    const row = await env.ctx.db.admin.selectFrom('app_users').select(['email_verified']).where('id', '=', body.data.user._id).executeTakeFirstOrThrow();
    expect(row.email_verified).toBe(signInCode === verifyCode);
  });

  it('open redirect through the link target: only the site URL and configured redirect URLs, on their paths', async () => {
    const email = uniqueEmail('redir');
    const bad = [
      'https://evil.example/', 'http://localhost:5173.evil.example/', 'http://localhost:5173@evil.example/', '//evil.example/',
      'http://evil.example\\@localhost:5173/', 'javascript:alert(1)', 'http://localhost:5174/', 'https://localhost:5173/',
      'http://localhost:5173/#x', 'http://user:pw@localhost:5173/', 'https://app.example.com/appx', 'https://app.example.com.evil.example/app',
    ];
    const patch = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}`, headers: await ownerAuth(p), payload: { redirectUrls: ['https://app.example.com/app'] } });
    expect(patch.statusCode).toBe(200);
    expect(patch.json().data.signIn.redirectUrls).toEqual(['https://app.example.com/app']);
    for (const redirectTo of bad) {
      env.clock.advance(61_000);
      const res = await start({ email, redirectTo });
      expect([redirectTo, res.statusCode, res.json().code]).toEqual([redirectTo, 400, 'redirect_not_allowed']);
    }
    expect(mailsTo(email)).toBe(0);
    const ok = await requestLink(email, { redirectTo: 'http://localhost:5173/welcome/../welcome?next=1' });
    expect(ok.href.startsWith('http://localhost:5173/welcome?next=1#type=magiclink&token=')).toBe(true);
    const configured = await requestLink(email, { redirectTo: 'https://app.example.com/app/signed-in' });
    expect(configured.origin + configured.pathname).toBe('https://app.example.com/app/signed-in');
    // A configured URL that is not https (or http on localhost) is refused by the settings.
    const insecure = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}`, headers: await ownerAuth(p), payload: { redirectUrls: ['http://app.example.com/'] } });
    expect(insecure.statusCode).toBe(400);
  });

  it('enumeration: the same answer for an account, a new address and (sign-up closed) an unknown one', async () => {
    const q = await authProject(env);
    const { body } = await signup(env, q);
    const known = body.data.user.email;
    const answers = [];
    answers.push(await start({ email: known }, q));
    answers.push(await start({ email: uniqueEmail('new') }, q));
    const closed = await env.app.inject({ method: 'PATCH', url: `/api/projects/${q.id}`, headers: await ownerAuth(q), payload: { allowSignup: false } });
    expect(closed.json().data.signIn.allowSignup).toBe(false);
    const unknown = uniqueEmail('unknown');
    answers.push(await start({ email: unknown }, q));
    answers.push(await start({ email: uniqueEmail('norefuse'), createUser: false }, q));
    for (const a of answers) expect([a.statusCode, a.body]).toEqual([answers[0]!.statusCode, answers[0]!.body]);
    expect(answers[0]!.statusCode).toBe(200);
    expect(mailsTo(unknown)).toBe(0);
    // Sign-up closed: the password sign-up is refused too.
    const s = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: q.pk, payload: { email: uniqueEmail(), password: PASSWORD } });
    expect([s.statusCode, s.json().code]).toEqual([403, 'signup_disabled']);
  });

  it('requests and code guesses are limited per email (any address) and per address', async () => {
    const limited = await createTestEnv();
    captureMail(limited);
    const lp = await authProject(limited);
    try {
      const post = (url: string, payload: Record<string, unknown>, ip: string) =>
        limited.app.inject({ method: 'POST', url: `/api/userAuth/passwordless/${url}`, headers: lp.pk, remoteAddress: ip, payload });
      const email = uniqueEmail('flood');
      // One per minute per email, whatever the address; then 5 requests per 10 minutes (refused ones count).
      expect((await post('start', { email }, '10.9.2.1')).statusCode).toBe(200);
      expect((await post('start', { email }, '10.9.2.2')).statusCode).toBe(429);
      for (let i = 0; i < 3; i++) {
        limited.clock.advance(61_000);
        expect((await post('start', { email }, `10.9.2.${10 + i}`)).statusCode).toBe(200);
      }
      limited.clock.advance(61_000);
      const sixth = await post('start', { email }, '10.9.2.20');
      expect(sixth.statusCode).toBe(429);
      expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(0);
      // 20 per address, any emails.
      for (let i = 0; i < 20; i++) expect((await post('start', { email: uniqueEmail('ip') }, '10.9.3.1')).statusCode).toBe(200);
      expect((await post('start', { email: uniqueEmail('ip') }, '10.9.3.1')).statusCode).toBe(429);
      // Code guesses: 5 per 10 minutes per email from any address, however many codes were asked for.
      const target = uniqueEmail('guess');
      for (let i = 0; i < 5; i++) expect((await post('verify', { email: target, code: '000000' }, `10.9.4.${i}`)).statusCode).toBe(400);
      expect((await post('verify', { email: target, code: '000000' }, '10.9.4.99')).statusCode).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it("squatter: an account someone created with another person's address is claimed by the mailbox owner", async () => {
    const { body } = await signup(env, p);
    const email = body.data.user.email;
    const token = tokenOf(await requestLink(email));
    const res = await verify({ token });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user.emailVerified).toBe(true);
    // The squatter's password and session are gone.
    const login = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email, password: PASSWORD } });
    expect(login.statusCode).toBe(401);
    expect((await refresh(env, p, body.data.refreshToken)).statusCode).toBe(403);
  });
});
