/**
 * End users' passkeys against the real database, with a software authenticator: registration,
 * discoverable sign-in, passkey as the second factor, and the attacks each step invites.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { SoftAuthenticator } from '../../helpers/webauthn.js';
import { authProject, authTestEnv, signup } from '../auth/helpers.js';
import { bearer, challengeFor, claimsOf, codeAt, enrolledUser, verify } from './helpers.js';

let env: TestEnv;
let p: TestProject;
const ORIGIN = 'https://app.example.com';

async function withPasskeys(proj: TestProject, rpId = 'example.com', origins = [ORIGIN]) {
  const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${proj.id}`, headers: proj.owner.auth, payload: { passkeys: { rpId, origins } } });
  expect(res.statusCode).toBe(200);
  return proj;
}

beforeAll(async () => {
  ({ env, p } = await authTestEnv());
  await withPasskeys(p);
});
afterAll(() => env.close());

const post = (proj: TestProject, url: string, payload: unknown, token?: string) =>
  env.app.inject({ method: 'POST', url, headers: token ? bearer(proj, token) : { ...proj.pk, 'x-refresh-token-mode': 'header' }, payload: payload as object });

async function registered(proj: TestProject = p, auth = new SoftAuthenticator(ORIGIN), token?: string) {
  const accessToken = token ?? (await signup(env, proj)).body.data.accessToken;
  const options = (await post(proj, '/api/userAuth/passkeys/register/options', {}, accessToken)).json().data;
  const res = await post(proj, '/api/userAuth/passkeys/register', { name: 'Laptop', response: auth.register(options) }, accessToken);
  expect(res.statusCode).toBe(200);
  return { auth, accessToken, body: res.json().data };
}

async function signinOptions(proj: TestProject = p) {
  return (await post(proj, '/api/userAuth/passkeys/signin/options', {})).json().data;
}

describe('registration and management', () => {
  it('registers several named passkeys, lists, renames and removes them (removal needs a fresh factor)', async () => {
    const { auth, accessToken, body } = await registered();
    expect(body.passkey.name).toBe('Laptop');
    expect(body.recoveryCodes).toHaveLength(10);
    const aal2 = body.accessToken;
    expect(claimsOf(aal2).aal).toBe('aal2');
    // A second passkey on the now-protected account needs the aal2 session.
    const refused = await post(p, '/api/userAuth/passkeys/register/options', {}, accessToken);
    expect(refused.json().code).toBe('mfa_required');
    const options = (await post(p, '/api/userAuth/passkeys/register/options', {}, aal2)).json().data;
    expect(options.excludeCredentials).toHaveLength(1);
    expect((await post(p, '/api/userAuth/passkeys/register', { name: 'Phone', response: auth.register(options) }, aal2)).statusCode).toBe(200);
    const list = (await env.app.inject({ method: 'GET', url: '/api/userAuth/passkeys', headers: bearer(p, aal2) })).json().data;
    expect(list.map((k: { name: string }) => k.name)).toEqual(['Laptop', 'Phone']);
    expect(JSON.stringify(list)).not.toMatch(/public|credential/i);
    const renamed = await env.app.inject({ method: 'PATCH', url: `/api/userAuth/passkeys/${list[1].id}`, headers: bearer(p, aal2), payload: { name: 'Work phone' } });
    expect(renamed.statusCode).toBe(200);
    const bare = await env.app.inject({ method: 'DELETE', url: `/api/userAuth/passkeys/${list[1].id}`, headers: bearer(p, aal2), payload: {} });
    expect(bare.json().code).toBe('mfa_code_required');
    const assertion = auth.assert(await signinOptions(), { cred: auth.credentials[0] });
    const removed = await env.app.inject({ method: 'DELETE', url: `/api/userAuth/passkeys/${list[1].id}`, headers: bearer(p, aal2), payload: { passkey: assertion } });
    expect(removed.statusCode).toBe(200);
    const after = (await env.app.inject({ method: 'GET', url: '/api/userAuth/passkeys', headers: bearer(p, aal2) })).json().data;
    expect(after.map((k: { name: string }) => k.name)).toEqual(['Laptop']);
  });

  it('renaming a passkey to only spaces is a 400 with a clear code, not a 500', async () => {
    const { body } = await registered();
    const aal2 = body.accessToken;
    const [key] = (await env.app.inject({ method: 'GET', url: '/api/userAuth/passkeys', headers: bearer(p, aal2) })).json().data;
    const res = await env.app.inject({ method: 'PATCH', url: `/api/userAuth/passkeys/${key.id}`, headers: bearer(p, aal2), payload: { name: ' \t  ' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('passkey_name_invalid');
  });

  it('422 passkeys_not_configured for a project without a relying party', async () => {
    const other = await authProject(env);
    const { body } = await signup(env, other);
    const res = await post(other, '/api/userAuth/passkeys/register/options', {}, body.data.accessToken);
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('passkeys_not_configured');
  });

  it('threat: a credential registered for another project\'s relying party is refused, at registration and at sign-in', async () => {
    const other = await withPasskeys(await authProject(env), 'other.example.org', ['https://other.example.org']);
    const { auth } = await registered(other, new SoftAuthenticator('https://other.example.org'));
    // Its assertion presented to this project: unknown credential here.
    const res = await post(p, '/api/userAuth/passkeys/signin', { response: auth.assert(await signinOptions(p), { origin: ORIGIN }) });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('passkey_invalid');
    // A registration made for the other relying party, sent to this project.
    const { body } = await signup(env, p);
    const options = (await post(p, '/api/userAuth/passkeys/register/options', {}, body.data.accessToken)).json().data;
    const foreign = auth.register(options, { rpId: 'other.example.org' });
    const reg = await post(p, '/api/userAuth/passkeys/register', { name: 'x', response: foreign }, body.data.accessToken);
    expect(reg.statusCode).toBe(400);
    expect(reg.json().code).toBe('passkey_invalid');
  });

  it('refuses a response from an origin the project does not allow', async () => {
    const { body } = await signup(env, p);
    const options = (await post(p, '/api/userAuth/passkeys/register/options', {}, body.data.accessToken)).json().data;
    const res = await post(p, '/api/userAuth/passkeys/register', { name: 'x', response: new SoftAuthenticator('https://evil.example.net').register(options) }, body.data.accessToken);
    expect(res.json().code).toBe('passkey_invalid');
  });
});

describe('discoverable sign-in', () => {
  it('signs in without an email, at aal2 with amr passkey', async () => {
    const { auth } = await registered();
    const res = await post(p, '/api/userAuth/passkeys/signin', { response: auth.assert(await signinOptions()) });
    expect(res.statusCode).toBe(200);
    expect(claimsOf(res.json().data.accessToken)).toMatchObject({ aal: 'aal2', amr: [{ method: 'passkey' }] });
    expect(res.json().data.refreshToken).toBeTruthy();
  });

  it('threat: a passkey assertion replayed is refused (the challenge is single use)', async () => {
    const { auth } = await registered();
    const assertion = auth.assert(await signinOptions());
    expect((await post(p, '/api/userAuth/passkeys/signin', { response: assertion })).statusCode).toBe(200);
    const replay = await post(p, '/api/userAuth/passkeys/signin', { response: assertion });
    expect(replay.statusCode).toBe(400);
    expect(replay.json().code).toBe('passkey_challenge_invalid');
  });

  it('threat: a counter that goes backwards (a cloned authenticator) is refused', async () => {
    const { auth } = await registered();
    expect((await post(p, '/api/userAuth/passkeys/signin', { response: auth.assert(await signinOptions(), { counter: 5 }) })).statusCode).toBe(200);
    const clone = await post(p, '/api/userAuth/passkeys/signin', { response: auth.assert(await signinOptions(), { counter: 3 }) });
    expect(clone.statusCode).toBe(400);
    expect(clone.json().code).toBe('passkey_counter_regressed');
    expect(env.logs.some((l) => l.includes('passkey.counter_regressed'))).toBe(true);
    expect((await post(p, '/api/userAuth/passkeys/signin', { response: auth.assert(await signinOptions(), { counter: 6 }) })).statusCode).toBe(200);
  });

  it('an authenticator without a counter (always 0) keeps working', async () => {
    const { auth } = await registered();
    for (let i = 0; i < 2; i++) expect((await post(p, '/api/userAuth/passkeys/signin', { response: auth.assert(await signinOptions(), { counter: 0 }) })).statusCode).toBe(200);
  });

  it('refuses a sign-in without user verification', async () => {
    const { auth } = await registered();
    const res = await post(p, '/api/userAuth/passkeys/signin', { response: auth.assert(await signinOptions(), { uv: false }) });
    expect(res.json().code).toBe('passkey_invalid');
  });

  it('refuses a challenge past its 5 minutes', async () => {
    const { auth } = await registered();
    const options = await signinOptions();
    env.clock.advance(301_000);
    expect((await post(p, '/api/userAuth/passkeys/signin', { response: auth.assert(options) })).json().code).toBe('passkey_challenge_invalid');
  });
});

describe('passkey as the second factor', () => {
  it('completes a password sign-in; threat: the assertion replayed on a new challenge is refused', async () => {
    const u = await enrolledUser(env, p);
    const auth = new SoftAuthenticator(ORIGIN);
    const options = (await post(p, '/api/userAuth/passkeys/register/options', {}, u.accessToken)).json().data;
    expect((await post(p, '/api/userAuth/passkeys/register', { name: 'Key', response: auth.register(options) }, u.accessToken)).statusCode).toBe(200);
    const challengeId = await challengeFor(env, p, u.email);
    const mfaOptions = (await post(p, '/api/userAuth/mfa/passkey/options', { challengeId })).json().data;
    expect(mfaOptions.allowCredentials).toHaveLength(1);
    const assertion = auth.assert(mfaOptions);
    const res = await verify(env, p, { challengeId, passkey: assertion });
    expect(res.statusCode).toBe(200);
    expect(claimsOf(res.json().data.accessToken)).toMatchObject({ aal: 'aal2', amr: [{ method: 'pwd' }, { method: 'passkey' }] });
    const next = await challengeFor(env, p, u.email);
    await post(p, '/api/userAuth/mfa/passkey/options', { challengeId: next });
    expect((await verify(env, p, { challengeId: next, passkey: assertion })).statusCode).toBe(400);
    // The app code still works as the other method.
    expect((await verify(env, p, { challengeId: next, code: codeAt(env, u.secret) })).statusCode).toBe(200);
  });

  it("threat: another user's passkey cannot complete a challenge", async () => {
    const victim = await enrolledUser(env, p);
    const { auth } = await registered();
    const challengeId = await challengeFor(env, p, victim.email);
    const res = await post(p, '/api/userAuth/mfa/passkey/options', { challengeId });
    expect(res.statusCode).toBe(404);
    const forged = auth.assert({ challenge: 'x' });
    expect((await verify(env, p, { challengeId, passkey: forged })).statusCode).toBe(400);
  });
});

describe('a passkey as the fresh proof for removing the app or regenerating codes', () => {
  it('threat: a user who lost the phone with the authenticator app is stuck with it (or a stolen token removes it): a passkey assertion removes the app and regenerates codes, a bare token does not', async () => {
    const u = await enrolledUser(env, p);
    const auth = new SoftAuthenticator(ORIGIN);
    await registered(p, auth, u.accessToken);
    const bareRemove = await env.app.inject({ method: 'DELETE', url: '/api/userAuth/mfa/totp', headers: bearer(p, u.accessToken), payload: {} });
    expect(bareRemove.json().code).toBe('mfa_code_required');
    const regen = await post(p, '/api/userAuth/mfa/recovery-codes', { passkey: auth.assert(await signinOptions(), { cred: auth.credentials[0] }) }, u.accessToken);
    expect(regen.statusCode).toBe(200);
    expect(regen.json().data.recoveryCodes).toHaveLength(10);
    const removed = await env.app.inject({
      method: 'DELETE', url: '/api/userAuth/mfa/totp', headers: bearer(p, u.accessToken), payload: { passkey: auth.assert(await signinOptions(), { cred: auth.credentials[0] }) },
    });
    expect(removed.statusCode).toBe(200);
    const factors = (await env.app.inject({ method: 'GET', url: '/api/userAuth/mfa/factors', headers: bearer(p, u.accessToken) })).json().data;
    expect(factors.totp).toBeNull();
    expect(factors.passkeys).toHaveLength(1);
  });

  it('threat: a passkey-only user cannot reach aal2 in a password session except by spending a recovery code: step-up takes a passkey assertion', async () => {
    const { auth, accessToken } = await registered();
    expect(claimsOf(accessToken).aal).toBe('aal1');
    const res = await post(p, '/api/userAuth/mfa/step-up', { passkey: auth.assert(await signinOptions(), { cred: auth.credentials[0] }) }, accessToken);
    expect(res.statusCode).toBe(200);
    const claims = claimsOf(res.json().data.accessToken);
    expect(claims.aal).toBe('aal2');
    expect(claims.amr.at(-1)?.method).toBe('passkey');
    const factors = (await env.app.inject({ method: 'GET', url: '/api/userAuth/mfa/factors', headers: bearer(p, res.json().data.accessToken) })).json().data;
    expect(factors.recoveryCodesLeft).toBe(10);
  });

  it("threat: another user's passkey assertion cannot remove this user's authenticator app", async () => {
    const u = await enrolledUser(env, p);
    const other = await registered();
    const res = await env.app.inject({
      method: 'DELETE', url: '/api/userAuth/mfa/totp', headers: bearer(p, u.accessToken), payload: { passkey: other.auth.assert(await signinOptions(), { cred: other.auth.credentials[0] }) },
    });
    expect(res.statusCode).toBe(400);
    const factors = (await env.app.inject({ method: 'GET', url: '/api/userAuth/mfa/factors', headers: bearer(p, u.accessToken) })).json().data;
    expect(factors.totp).toMatchObject({ confirmed: true });
  });
});

describe('clean-up', () => {
  it('the crontab job deletes expired MFA challenges and WebAuthn ceremonies, and only those', async () => {
    const { buildTaskList, CRONTAB } = await import('../../../src/worker/tasks.js');
    expect(CRONTAB).toContain('mfa:delete_expired_challenges');
    await signinOptions();
    env.clock.advance(301_000);
    const live = await signinOptions();
    await buildTaskList(env.ctx)['mfa:delete_expired_challenges']!({}, {} as never);
    const left = await env.ctx.db.admin.selectFrom('app_user_webauthn_challenges').select('challenge').where('project_id', '=', p.id).execute();
    expect(left.map((r) => r.challenge)).toContain(live.challenge);
    expect(left.every((r) => r.challenge === live.challenge || false)).toBe(true);
  });
});
