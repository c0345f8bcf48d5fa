/**
 * Operators' passkeys against the real database, with a software authenticator for the
 * console's relying party (DASHBOARD_URL's host): register several, name, list, rename,
 * remove with a fresh second factor; discoverable sign-in and passkey as the second factor of
 * a password sign-in; and the attacks each step invites. Also: the crontab deletes expired
 * operator challenges as it does end users'.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestOperator } from '../../helpers/fixtures.js';
import { SoftAuthenticator } from '../../helpers/webauthn.js';

const CONSOLE = 'https://console.example.com';
let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv({ DASHBOARD_URL: CONSOLE, RATE_LIMIT_SCALE: '100' });
});
afterAll(() => env.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const post = (url: string, payload: object = {}, headers: Record<string, string> = {}) => env.app.inject({ method: 'POST', url, headers, payload });
const login = (op: TestOperator) => post('/api/auth/login', { email: op.email, password: op.password });

/** An operator with one registered passkey: the aal2 token and the recovery codes registration gave. */
async function withPasskey(auth = new SoftAuthenticator(CONSOLE)) {
  const op = await makeOperator(env.ctx);
  const options = (await post('/api/auth/mfa/passkeys/register/options', {}, op.auth)).json().data;
  expect(options.rp.id).toBe('console.example.com');
  const res = await post('/api/auth/mfa/passkeys/register', { name: 'Laptop', response: auth.register(options) }, op.auth);
  expect(res.statusCode).toBe(200);
  return { op, auth, aal2: res.json().data.accessToken as string, recoveryCodes: res.json().data.recoveryCodes as string[] };
}

const signinOptions = async () => (await post('/api/auth/passkeys/signin/options')).json().data;

describe('operator passkeys: registration and management', () => {
  it('registers several named passkeys, lists, renames and removes them; the first brings recovery codes and an aal2 session', async () => {
    const { op, auth, aal2, recoveryCodes } = await withPasskey();
    expect(recoveryCodes).toHaveLength(10);
    expect(decodeJwt(aal2)).toMatchObject({ aal: 'aal2', amr: [{ method: 'pwd' }, { method: 'passkey' }] });
    // Threat: the password-only session adds a second passkey to the protected account.
    expect((await post('/api/auth/mfa/passkeys/register/options', {}, op.auth)).json().code).toBe('mfa_required');
    const options = (await post('/api/auth/mfa/passkeys/register/options', {}, bearer(aal2))).json().data;
    expect(options.excludeCredentials).toHaveLength(1);
    const second = await post('/api/auth/mfa/passkeys/register', { name: 'Phone', response: auth.register(options) }, bearer(aal2));
    expect(second.statusCode).toBe(200);
    expect(second.json().data.recoveryCodes).toBeUndefined();
    const list = (await env.app.inject({ method: 'GET', url: '/api/auth/mfa/passkeys', headers: bearer(aal2) })).json().data;
    expect(list.map((k: { name: string }) => k.name)).toEqual(['Laptop', 'Phone']);
    expect(JSON.stringify(list)).not.toMatch(/public|credential/i);
    const factors = (await env.app.inject({ method: 'GET', url: '/api/auth/mfa/factors', headers: bearer(aal2) })).json().data;
    expect(factors).toMatchObject({ totp: null, recoveryCodesLeft: 10, aal: 'aal2' });
    expect(factors.passkeys).toHaveLength(2);
    const renamed = await env.app.inject({ method: 'PATCH', url: `/api/auth/mfa/passkeys/${list[1].id}`, headers: bearer(aal2), payload: { name: '  Work phone ' } });
    expect(renamed.statusCode).toBe(200);
    // Threat: a stolen session alone removes the passkey.
    const bare = await env.app.inject({ method: 'DELETE', url: `/api/auth/mfa/passkeys/${list[0].id}`, headers: bearer(aal2), payload: {} });
    expect(bare.json().code).toBe('mfa_code_required');
    // Another passkey's assertion over a sign-in challenge is a fresh factor.
    const proof = auth.assert(await signinOptions(), { cred: auth.credentials[1] });
    const removed = await env.app.inject({ method: 'DELETE', url: `/api/auth/mfa/passkeys/${list[0].id}`, headers: bearer(aal2), payload: { passkey: proof } });
    expect(removed.statusCode).toBe(200);
    const left = (await env.app.inject({ method: 'GET', url: '/api/auth/mfa/passkeys', headers: bearer(aal2) })).json().data;
    expect(left.map((k: { name: string }) => k.name)).toEqual(['Work phone']);
    // The last factor removed with a recovery code: codes go, sign-in is one step again.
    const last = await env.app.inject({ method: 'DELETE', url: `/api/auth/mfa/passkeys/${left[0].id}`, headers: bearer(aal2), payload: { recoveryCode: recoveryCodes[0] } });
    expect(last.statusCode).toBe(200);
    expect((await login(op)).json().data.token).toBeTruthy();
    const rows = await env.ctx.db.admin.selectFrom('operator_recovery_codes').select('code_hash').where('operator_id', '=', op.id).execute();
    expect(rows).toHaveLength(0);
  });

  it('renaming a passkey to only spaces is a 400 with a clear code, not a 500', async () => {
    const { aal2 } = await withPasskey();
    const [key] = (await env.app.inject({ method: 'GET', url: '/api/auth/mfa/passkeys', headers: bearer(aal2) })).json().data;
    const res = await env.app.inject({ method: 'PATCH', url: `/api/auth/mfa/passkeys/${key.id}`, headers: bearer(aal2), payload: { name: '   ' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('passkey_name_invalid');
  });

  it("threat: a credential made for another relying party, or answered from another origin, is refused", async () => {
    const op = await makeOperator(env.ctx);
    const auth = new SoftAuthenticator(CONSOLE);
    const options = (await post('/api/auth/mfa/passkeys/register/options', {}, op.auth)).json().data;
    const otherRp = await post('/api/auth/mfa/passkeys/register', { response: auth.register(options, { rpId: 'evil.example.net' }) }, op.auth);
    expect(otherRp.json().code).toBe('passkey_invalid');
    const again = (await post('/api/auth/mfa/passkeys/register/options', {}, op.auth)).json().data;
    const otherOrigin = await post('/api/auth/mfa/passkeys/register', { response: auth.register(again, { origin: 'https://evil.example.net' }) }, op.auth);
    expect(otherOrigin.json().code).toBe('passkey_invalid');
    // A key the console has not registered (same private key, another credential id) is unknown.
    const { auth: mine } = await withPasskey();
    const userKey = new SoftAuthenticator(CONSOLE);
    userKey.credentials.push({ ...mine.credentials[0]!, id: Buffer.from('not-an-operator-key') });
    const res = await post('/api/auth/passkeys/signin', { response: userKey.assert(await signinOptions()) });
    expect(res.json().code).toBe('passkey_invalid');
  });
});

describe('operator passkeys: sign-in', () => {
  it('signs in without an email, at aal2; threat: the assertion replayed is refused', async () => {
    const { op, auth } = await withPasskey();
    const options = await signinOptions();
    expect(options.allowCredentials ?? []).toHaveLength(0);
    const assertion = auth.assert(options);
    const res = await post('/api/auth/passkeys/signin', { response: assertion });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user._id).toBe(op.id);
    expect(decodeJwt(res.json().data.token)).toMatchObject({ aal: 'aal2', amr: [{ method: 'passkey' }] });
    expect(res.cookies.find((c) => c.name === 'accessToken')).toBeTruthy();
    const replay = await post('/api/auth/passkeys/signin', { response: assertion });
    expect(replay.json().code).toBe('passkey_challenge_invalid');
    // The aal2 session may do what needs aal2 (delete a project).
    const project = await makeProject(env.ctx, op);
    const del = await env.app.inject({ method: 'DELETE', url: `/api/projects/${project.id}`, headers: bearer(res.json().data.token) });
    expect(del.statusCode).toBe(200);
  });

  it('threat: a counter that goes backwards (a cloned authenticator) is refused', async () => {
    const { auth } = await withPasskey();
    expect((await post('/api/auth/passkeys/signin', { response: auth.assert(await signinOptions(), { counter: 5 }) })).statusCode).toBe(200);
    const cloned = await post('/api/auth/passkeys/signin', { response: auth.assert(await signinOptions(), { counter: 3 }) });
    expect(cloned.json().code).toBe('passkey_counter_regressed');
  });

  it('refuses a discoverable sign-in without user verification', async () => {
    const { auth } = await withPasskey();
    const res = await post('/api/auth/passkeys/signin', { response: auth.assert(await signinOptions(), { uv: false }) });
    expect(res.json().code).toBe('passkey_invalid');
  });

  it('completes a password sign-in with a passkey; threat: the challenge reused, or completed with another operator\'s passkey', async () => {
    const { op, auth } = await withPasskey();
    const first = (await login(op)).json().data;
    expect(first).toMatchObject({ mfaRequired: true, methods: ['passkey', 'recovery_code'] });
    const options = (await post('/api/auth/mfa/passkey/options', { challengeId: first.challengeId })).json().data;
    expect(options.allowCredentials).toHaveLength(1);
    // Another operator's passkey over this challenge's options.
    const { auth: other } = await withPasskey();
    const foreign = await post('/api/auth/mfa/verify', { challengeId: first.challengeId, passkey: other.assert(options) });
    expect(foreign.json().code).toBe('passkey_invalid');
    const res = await post('/api/auth/mfa/verify', { challengeId: first.challengeId, passkey: auth.assert(options) });
    expect(res.statusCode).toBe(200);
    expect(decodeJwt(res.json().data.token)).toMatchObject({ aal: 'aal2', amr: [{ method: 'pwd' }, { method: 'passkey' }] });
    const reused = await post('/api/auth/mfa/verify', { challengeId: first.challengeId, passkey: auth.assert(options) });
    expect(reused.json().code).toBe('mfa_challenge_invalid');
  });
});

describe('clean-up', () => {
  it('the crontab job also deletes expired operator MFA challenges and ceremonies, and only those', async () => {
    const { op } = await withPasskey();
    const { buildTaskList } = await import('../../../src/worker/tasks.js');
    await login(op);
    await signinOptions();
    env.clock.advance(301_000);
    await login(op);
    const live = await signinOptions();
    await buildTaskList(env.ctx)['mfa:delete_expired_challenges']!({}, {} as never);
    const now = env.clock.now();
    const challenges = await env.ctx.db.admin.selectFrom('operator_mfa_challenges').select(['expires_at']).where('operator_id', '=', op.id).execute();
    expect(challenges).toHaveLength(1);
    expect(new Date(challenges[0]!.expires_at).getTime()).toBeGreaterThan(now.getTime());
    const ceremonies = await env.ctx.db.admin.selectFrom('operator_webauthn_challenges').select(['challenge', 'expires_at']).execute();
    expect(ceremonies.every((c) => new Date(c.expires_at).getTime() > now.getTime())).toBe(true);
    expect(ceremonies.map((c) => c.challenge)).toContain(live.challenge);
  });
});
