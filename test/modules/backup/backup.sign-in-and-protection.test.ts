/**
 * What an ordinary app's users lose when its backup does not carry this wave's tables: their
 * authenticator app, recovery codes and passkeys (locked out of a second factor, or of a
 * passwordless account), their sign-in with an OpenID Connect provider (the restored project
 * makes them a second, empty account), the project's own mail texts (mails in the wrong
 * language), the hidden and read-only fields of documents (values gone, or shown to everyone),
 * access rules, private files (made public), and the sign-in settings that make all of it work.
 *
 * One source project is built through the API, then: its archive, a copy with new ids while
 * it still exists, a version 1 archive (written before these tables) that still restores, the
 * archives that must be refused whole, and finally a restore after the source is gone (same
 * ids), where every user signs in again the way they did before.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SystemMail } from '../../../src/context.js';
import { decrypt, encrypt } from '../../../src/lib/crypto.js';
import { parseFormPost, startFakeOidc, type FakeOidc } from '../../fakes/oidc.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { SoftAuthenticator } from '../../helpers/webauthn.js';
import { authProject, captureMail, PASSWORD, signup, uniqueEmail } from '../auth/helpers.js';
import { api, createCollection } from '../data/helpers.js';
import { bearer, claimsOf, codeAt, enrolledUser, nextStep, type Enrolled } from '../mfa/helpers.js';
import { jarOf } from '../social/helpers.js';
import { requestUpload, putSigned, confirm } from '../storage/helpers.js';
import { exportOf, importInto, must } from './helpers.js';

let env: TestEnv;
let mail: SystemMail[];
let idp: FakeOidc;
let A: ReturnType<typeof api>;
let src: TestProject;
let archive: Buffer;
let totpUser: Enrolled;
let keyUser: { email: string; id: string; auth: SoftAuthenticator };
let oidcUser: { email: string; id: string; sub: string };
let alice: { email: string; id: string };
let bob: { email: string; id: string };
let privatePath: string;
let storageCopy: string;
let hookSecret: string;

const ORIGIN = 'https://app.example.com';
const FILE_BYTES = Buffer.from('private bytes');

const records = (gz: Buffer) => gunzipSync(gz).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
const regzip = (recs: unknown[]) => gzipSync(recs.map((r) => JSON.stringify(r)).join('\n') + '\n');

const post = (p: TestProject, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  env.app.inject({ method: 'POST', url, headers: { ...p.pk, 'x-refresh-token-mode': 'header', ...headers }, payload: payload as object });

async function loginAs(p: TestProject, email: string) {
  const body = await must(env, 'POST', '/api/userAuth/login', { ...p.pk, 'x-refresh-token-mode': 'header' }, { email, password: PASSWORD });
  return bearer(p, body.data.accessToken as string);
}

/** The browser's steps of an OpenID Connect sign-in: start → the provider consents → callback. */
async function oidcSignIn(p: TestProject) {
  const start = await env.app.inject({ method: 'GET', url: `/api/userAuth/social/acme/start?key=${p.publishableKey}` });
  if (start.statusCode !== 302) return { status: start.statusCode, body: start.json(), redirect: null };
  const consent = await fetch(start.headers.location as string, { redirect: 'manual' });
  let callbackPath: string;
  if (consent.status === 200) {
    const { action, fields } = parseFormPost(await consent.text());
    const posted = await env.app.inject({ method: 'POST', url: new URL(action).pathname, payload: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    callbackPath = posted.headers.location as string;
  } else {
    const back = new URL(consent.headers.get('location')!);
    callbackPath = back.pathname + back.search;
  }
  const res = await env.app.inject({ method: 'GET', url: callbackPath, cookies: jarOf(start) });
  return { status: res.statusCode, body: null, redirect: res.headers.location ? new URL(res.headers.location as string) : null };
}

/** Password, then the authenticator app's code: the user id of the aal2 session, or the failure. */
async function signInWithTotp(p: TestProject, user: Enrolled, proof?: Record<string, unknown>) {
  const first = await post(p, '/api/userAuth/login', { email: user.email, password: PASSWORD });
  const challengeId = first.json().data?.challengeId as string | undefined;
  if (!challengeId) return { status: first.statusCode, body: first.json() };
  nextStep(env);
  const res = await post(p, '/api/userAuth/mfa/verify', { challengeId, ...(proof ?? { code: codeAt(env, user.secret) }) });
  return { status: res.statusCode, body: res.json() };
}

async function signInWithPasskey(p: TestProject, auth: SoftAuthenticator) {
  const options = (await post(p, '/api/userAuth/passkeys/signin/options', {})).json().data;
  const res = await post(p, '/api/userAuth/passkeys/signin', { response: auth.assert(options) });
  return { status: res.statusCode, body: res.json() };
}

async function lastResetMail(p: TestProject, email: string) {
  env.clock.advance(31_000); // one code per 30 s and address
  const res = await post(p, '/api/userAuth/request-password-reset', { email }, { 'accept-language': 'de' });
  expect(res.statusCode, res.body).toBe(200);
  return [...mail].reverse().find((m) => m.to === email && m.tag === 'auth.password-reset')!;
}

const notesAs = async (headers: Record<string, string>) =>
  ((await A.get('/api/data/notes?sort=title', headers)).body.data.items as Array<Record<string, unknown>>).map(({ title, pin, audit, status }) => ({ title, pin, audit, status }));

beforeAll(async () => {
  idp = await startFakeOidc();
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  mail = captureMail(env);
  A = api(env);
  src = await authProject(env);
  await must(env, 'PATCH', `/api/projects/${src.id}`, src.owner.auth, { passkeys: { rpId: 'example.com', origins: [ORIGIN] }, allowSignup: true });
  await must(env, 'PUT', `/api/projects/${src.id}/auth/oidc/acme`, src.owner.auth, { preset: 'keycloak', label: 'Acme SSO', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, enabled: true });
  await must(env, 'PUT', `/api/projects/${src.id}/mail/auth-templates/reset/de`, src.owner.auth, { subject: 'Acme: neues Passwort', text: 'Dein Code: {{ code }}' });
  await must(env, 'PUT', `/api/projects/${src.id}/mail/auth-templates/default-locale`, src.owner.auth, { locale: 'de' });
  await must(env, 'POST', `/api/projects/${src.id}/mail/templates`, src.owner.auth, { name: 'Order Shipped', subject: 'Order {{orderId}} shipped', text: 'On its way.' });

  // A user with an authenticator app (and recovery codes), one with a passkey, one who signs in with the provider.
  totpUser = await enrolledUser(env, src);
  const auth = new SoftAuthenticator(ORIGIN);
  const k = await signup(env, src);
  const options = (await post(src, '/api/userAuth/passkeys/register/options', {}, { authorization: `Bearer ${k.body.data.accessToken as string}` })).json().data;
  const reg = await post(src, '/api/userAuth/passkeys/register', { name: 'Laptop', response: auth.register(options) }, { authorization: `Bearer ${k.body.data.accessToken as string}` });
  expect(reg.statusCode, reg.body).toBe(200);
  keyUser = { email: k.body.data.user.email, id: k.body.data.user._id, auth };
  oidcUser = { email: uniqueEmail('olga'), id: '', sub: 'kc-backup-1' };
  idp.nextUser = { sub: oidcUser.sub, email: oidcUser.email, email_verified: true, name: 'Olga' };
  const first = await oidcSignIn(src);
  expect(first.redirect?.searchParams.get('isNewUser')).toBe('true');
  oidcUser.id = (await env.ctx.db.admin.selectFrom('app_users').select('id').where('project_id', '=', src.id).where('email', '=', oidcUser.email).executeTakeFirstOrThrow()).id;

  // Notes: hidden fields (owner's, secret key's), a read-only one, and a rule (drafts are their owner's).
  const a = await signup(env, src);
  const b = await signup(env, src);
  alice = { email: a.body.data.user.email, id: a.body.data.user._id };
  bob = { email: b.body.data.user.email, id: b.body.data.user._id };
  await createCollection(env, src, 'notes', [
    { key: 'title', type: 'String', required: true },
    { key: 'published', type: 'Boolean' },
    { key: 'userId', type: 'String' },
    { key: 'pin', type: 'String', hidden: 'owner' },
    { key: 'audit', type: 'String', hidden: 'secret' },
    { key: 'status', type: 'String', readOnly: true, default: 'new' },
  ], { enabled: true, mode: 'public-read', ownerField: 'userId' });
  await must(env, 'PATCH', `/api/projects/${src.id}/collections/notes/rules`, src.owner.auth, { list: 'published = true || userId = @auth.id', view: 'published = true || userId = @auth.id' });
  const asAlice = await loginAs(src, alice.email);
  expect((await A.post('/api/data/notes', asAlice, { title: 'a-public', published: true, userId: alice.id, pin: '1234' })).status).toBe(201);
  expect((await A.post('/api/data/notes', asAlice, { title: 'b-draft', published: false, userId: alice.id, pin: '9999' })).status).toBe(201);
  const published = (await A.get('/api/data/notes?sort=title', src.sk)).body.data.items[0];
  expect((await A.patch(`/api/data/notes/${published._id as string}`, src.sk, { audit: 'checked by staff', status: 'approved' })).status).toBe(200);

  // A private file (served only on a signed URL, to the secret key or to its owner).
  const req = await requestUpload(env, src.sk, { filename: 'contract.pdf', contentType: 'application/octet-stream', size: FILE_BYTES.length, private: true });
  expect(req.statusCode, req.body).toBe(200);
  const { signedUrl, filePath } = req.json().data as { signedUrl: string; filePath: string };
  expect((await putSigned(env, signedUrl, FILE_BYTES)).statusCode).toBe(200);
  expect((await confirm(env, src.sk, filePath, FILE_BYTES.length)).statusCode).toBe(200);
  privatePath = filePath.slice(filePath.indexOf('/') + 1);
  expect((await env.app.inject({ method: 'GET', url: `/api/storage/public/${filePath}` })).statusCode).toBe(403);

  // A webhook endpoint: its receiver verifies signatures with the secret shown once.
  const hook = await must(env, 'POST', `/api/projects/${src.id}/webhooks`, src.owner.auth, { url: 'https://hooks.example.com/plinth', events: ['create'] });
  hookSecret = hook.data.secret;

  archive = await exportOf(env, src);
  // The operator's copy of the objects (docs/backup.md: file bytes are copied with storage tools).
  storageCopy = mkdtempSync(path.join(tmpdir(), 'plinth-backup-objects-'));
  cpSync(path.join(env.config.storage.localDir, src.id), storageCopy, { recursive: true });
}, 60_000);
afterAll(async () => {
  await env.close();
  await idp.close();
  rmSync(storageCopy, { recursive: true, force: true });
});

describe('the archive (what version 2 added)', () => {
  it('carries second factors, passkeys, provider identities, mail texts, hidden values, file privacy and settings, with counts', () => {
    const recs = records(archive);
    expect(recs[0]).toMatchObject({ type: 'header', version: 3 });
    const of = (t: string) => recs.filter((r) => r.type === t);
    expect(of('totp')).toMatchObject([{ userId: totpUser.userId, verifiedAt: expect.any(String) }]);
    expect(of('recoveryCode').filter((c) => c.userId === totpUser.userId)).toHaveLength(10);
    expect(of('passkey')).toMatchObject([{ userId: keyUser.id, rpId: 'example.com', name: 'Laptop' }]);
    expect(of('identity')).toMatchObject([{ userId: oidcUser.id, provider: 'acme', issuer: idp.issuer, subject: oidcUser.sub }]);
    expect(of('authMailTemplate')).toMatchObject([{ kind: 'reset', locale: 'de', subject: 'Acme: neues Passwort' }]);
    expect(of('file')).toMatchObject([{ name: privatePath, private: true }]);
    const approved = of('document').find((d) => d.data.title === 'a-public')!;
    expect(approved.data).toMatchObject({ pin: '1234', audit: 'checked by staff', status: 'approved' });
    expect(of('settings')).toMatchObject([{ settings: { passkeys: { rpId: 'example.com' }, mailDefaultLocale: 'de', oidcProviders: { acme: { issuer: idp.issuer, enabled: true } } } }]);
    expect(of('webhook')).toMatchObject([{ url: 'https://hooks.example.com/plinth', events: ['create'], enabled: true }]);
    expect(recs.at(-1)!.counts).toMatchObject({ totpFactors: 1, recoveryCodes: of('recoveryCode').length, passkeys: 1, identities: 1, authMailTemplates: 1, mailTemplates: 1, webhooks: 1, files: 1 });
  });

  it('threat: a leaked archive gives no usable secret: the TOTP seed, provider client secret and codes are not in clear', () => {
    const text = gunzipSync(archive).toString('utf8');
    expect(text).not.toContain(totpUser.secret);
    expect(text).not.toContain(idp.clientSecret);
    expect(text).not.toContain(hookSecret);
    for (const code of totpUser.recoveryCodes) expect(text).not.toContain(code);
    expect(text).not.toContain(src.secretKey);
  });
});

describe('a copy with new ids while the source still exists', () => {
  it("users keep their authenticator app, passkey and provider sign-in in the copy (recovery codes are bound to the old id: left out, said so)", async () => {
    const copy = await makeProject(env.ctx, src.owner, 'Staging copy');
    const res = await importInto(env, copy, archive, '?newIds=true');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.notes.join(' ')).toMatch(/\d+ recovery codes were left out/);
    expect(res.body.data.notes.join(' ')).toMatch(/without their client secrets.*acme/);
    const totp = await signInWithTotp(copy, totpUser);
    expect(totp.status, JSON.stringify(totp.body)).toBe(200);
    expect(claimsOf(totp.body.data.accessToken).aal).toBe('aal2');
    expect(totp.body.data.user._id).not.toBe(totpUser.userId);
    const key = await signInWithPasskey(copy, keyUser.auth);
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    expect(key.body.data.user.email).toBe(keyUser.email);
    await must(env, 'PUT', `/api/projects/${copy.id}/auth/oidc/acme`, copy.owner.auth, { preset: 'keycloak', clientSecret: idp.clientSecret });
    idp.nextUser = { sub: oidcUser.sub, email: oidcUser.email, email_verified: true };
    const oidc = await oidcSignIn(copy);
    expect(oidc.redirect?.searchParams.get('error')).toBeNull();
    expect(oidc.redirect?.searchParams.get('isNewUser')).toBe('false');
    const copied = await env.ctx.db.admin.selectFrom('app_users').select('id').where('project_id', '=', copy.id).where('email', '=', oidcUser.email).executeTakeFirstOrThrow();
    expect(oidc.redirect?.searchParams.get('userId')).toBe(copied.id);
    // The copy's webhook endpoint is there but disabled: it must not send to the original's receiver.
    const hooks = await env.ctx.db.admin.selectFrom('webhook_endpoints').select(['enabled', 'url']).where('project_id', '=', copy.id).execute();
    expect(hooks).toEqual([{ enabled: false, url: 'https://hooks.example.com/plinth' }]);
    expect(res.body.data.notes.join(' ')).toMatch(/copied disabled/);
  });
});

describe('older and hostile archives', () => {
  it('a version 1 archive (made before factors, identities, templates and settings) still restores', async () => {
    const v1Types = new Set(['header', 'collection', 'document', 'user', 'file', 'end']);
    const recs = records(archive).filter((r) => v1Types.has(r.type)).map((r) => {
      if (r.type === 'header') return { ...r, version: 1 };
      if (r.type === 'end') return { type: 'end', counts: { collections: r.counts.collections, documents: r.counts.documents, users: r.counts.users, files: r.counts.files } };
      if (r.type === 'file') return Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'private'));
      return r;
    });
    const old = await makeProject(env.ctx, src.owner, 'From an old backup');
    const res = await importInto(env, old, regzip(recs), '?newIds=true');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.counts).toMatchObject({ users: 5, documents: 2, totpFactors: 0, passkeys: 0 });
    const login = await post(old, '/api/userAuth/login', { email: alice.email, password: PASSWORD });
    expect(login.statusCode).toBe(200);
  });

  it('threat: an archive that attaches a factor or an identity to an account of another project is refused whole', async () => {
    const victim = await authProject(env);
    const stranger = (await signup(env, victim)).body.data.user._id as string;
    const recs = records(archive);
    const header = recs[0];
    const zero = { collections: 0, documents: 0, users: 0, files: 0, totpFactors: 0, recoveryCodes: 0, passkeys: 0, identities: 0, authMailTemplates: 0, mailTemplates: 0 };
    for (const [type, count] of [['passkey', 'passkeys'], ['identity', 'identities'], ['totp', 'totpFactors'], ['recoveryCode', 'recoveryCodes']] as const) {
      const planted = { ...recs.find((r) => r.type === type)!, userId: stranger };
      const target = await makeProject(env.ctx, undefined, 'Hostile');
      const res = await importInto(env, target, regzip([header, planted, { type: 'end', counts: { ...zero, [count]: 1 } }]));
      expect(res.status, `${type} ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.code).toBe('invalid_archive');
      expect(res.body.message).toMatch(/name a user the archive does not hold/);
    }
    expect(await env.ctx.db.admin.selectFrom('app_user_passkeys').select('id').where('user_id', '=', stranger).execute()).toEqual([]);
    expect(await env.ctx.db.admin.selectFrom('app_user_identities').select('subject').where('user_id', '=', stranger).execute()).toEqual([]);
    expect(await env.ctx.db.admin.selectFrom('app_user_totp').select('user_id').where('user_id', '=', stranger).execute()).toEqual([]);
  });

  it('threat: settings that skip their checks (an issuer on a private network, a passkey origin on another host) are refused', async () => {
    const strict = await createTestEnv({ OIDC_ALLOW_PRIVATE_ISSUERS: 'false' });
    try {
      const target = await makeProject(strict.ctx);
      const res = await strict.app.inject({ method: 'POST', url: `/api/projects/${target.id}/import?newIds=true`, headers: { ...target.owner.auth, 'content-type': 'application/gzip' }, payload: archive });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toMatch(/\(settings\): .*issuer must/);
      const recs = records(archive).map((r) => (r.type === 'settings' ? { ...r, settings: { passkeys: { rpId: 'example.com', origins: ['https://evil.test'] } } } : r));
      const again = await importInto(env, await makeProject(env.ctx), regzip(recs), '?newIds=true');
      expect(again.status).toBe(400);
      expect(again.body.message).toMatch(/Passkey origin/);
    } finally {
      await strict.close();
    }
  });

  it('an authenticator secret sealed with another ENCRYPTION_KEY is a conflict, not a factor nobody can use', async () => {
    const recs = records(archive).map((r) => (r.type === 'totp' ? { ...r, secret: encrypt(Buffer.alloc(32, 7), 'JBSWY3DPEHPK3PXP') } : r));
    const target = await makeProject(env.ctx);
    const res = await importInto(env, target, regzip(recs), '?newIds=true');
    expect(res.status).toBe(409);
    expect(res.body.conflicts.join(' ')).toMatch(/another ENCRYPTION_KEY/);
  });
});

let dst: TestProject;

describe('restored after the source is gone (same ids)', () => {
  beforeAll(async () => {
    expect((await env.app.inject({ method: 'DELETE', url: `/api/projects/${src.id}`, headers: src.owner.auth })).statusCode).toBe(200);
    dst = await makeProject(env.ctx, src.owner, 'Restored');
    const res = await importInto(env, dst, archive);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.conflicts).toEqual([]);
    cpSync(storageCopy, path.join(env.config.storage.localDir, dst.id), { recursive: true });
  }, 60_000);

  it('a user with an authenticator app is still asked for it, and their code and recovery codes still work', async () => {
    const noCode = await post(dst, '/api/userAuth/login', { email: totpUser.email, password: PASSWORD });
    expect(noCode.json().data.challengeId).toEqual(expect.any(String));
    expect(noCode.json().data.accessToken).toBeUndefined();
    const ok = await signInWithTotp(dst, totpUser);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.user._id).toBe(totpUser.userId);
    expect(claimsOf(ok.body.data.accessToken).aal).toBe('aal2');
    const rc = await signInWithTotp(dst, totpUser, { recoveryCode: totpUser.recoveryCodes[0] });
    expect(rc.status, JSON.stringify(rc.body)).toBe(200);
  });

  it('a user with a passkey signs in with it', async () => {
    const res = await signInWithPasskey(dst, keyUser.auth);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.user._id).toBe(keyUser.id);
  });

  it('a user of the provider signs in to the same account once the client secret is entered again (it never travels)', async () => {
    const list = await must(env, 'GET', `/api/projects/${dst.id}/auth/oidc`, dst.owner.auth);
    expect(list.data.providers).toMatchObject([{ id: 'acme', issuer: idp.issuer, clientId: idp.clientId, enabled: true, hasClientSecret: false }]);
    const before = await oidcSignIn(dst);
    expect(before.status).toBe(422);
    await must(env, 'PUT', `/api/projects/${dst.id}/auth/oidc/acme`, dst.owner.auth, { preset: 'keycloak', clientSecret: idp.clientSecret });
    idp.nextUser = { sub: oidcUser.sub, email: oidcUser.email, email_verified: true };
    const after = await oidcSignIn(dst);
    expect(after.redirect?.searchParams.get('error')).toBeNull();
    expect(after.redirect?.searchParams.get('isNewUser')).toBe('false');
    expect(after.redirect?.searchParams.get('userId')).toBe(oidcUser.id);
  });

  it("the project's own mails are still the ones sent: its German reset text, its templates", async () => {
    const m = await lastResetMail(dst, alice.email);
    expect(m.subject).toBe('Acme: neues Passwort');
    expect(m.text).toMatch(/^Dein Code: \d{6}/);
    const own = (await must(env, 'GET', `/api/projects/${dst.id}/mail/templates`, dst.owner.auth)).data.templates as Array<{ key: string; subject: string }>;
    expect(own).toMatchObject([{ key: 'order-shipped', subject: 'Order {{orderId}} shipped' }]);
  });

  it('hidden values are still returned to their owner and to the secret key only; read-only and rules still hold', async () => {
    const asAlice = await loginAs(dst, alice.email);
    const asBob = await loginAs(dst, bob.email);
    expect(await notesAs(asAlice)).toEqual([
      { title: 'a-public', pin: '1234', audit: undefined, status: 'approved' },
      { title: 'b-draft', pin: '9999', audit: undefined, status: 'new' },
    ]);
    // Bob sees the published note only (the rule), without its owner's pin.
    expect(await notesAs(asBob)).toEqual([{ title: 'a-public', pin: undefined, audit: undefined, status: 'approved' }]);
    expect((await notesAs(dst.sk))[0]).toEqual({ title: 'a-public', pin: '1234', audit: 'checked by staff', status: 'approved' });
    const row = await env.ctx.db.admin.selectFrom('documents').select(['data']).where('project_id', '=', dst.id).where('owner_id', '=', alice.id).execute();
    expect(row.map((r) => Object.keys(r.data as object)).flat()).not.toContain('pin');
    const draft = (await A.get('/api/data/notes?sort=title', asAlice)).body.data.items[1];
    expect((await A.patch(`/api/data/notes/${draft._id as string}`, asAlice, { status: 'approved' })).status).toBe(403);
  });

  it("the webhook endpoint still sends, signed with the secret its receiver knows", async () => {
    const row = await env.ctx.db.admin.selectFrom('webhook_endpoints').select(['enabled', 'events', 'secret']).where('project_id', '=', dst.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ enabled: true, events: ['create'] });
    expect(decrypt(env.config.encryptionKey, row.secret)).toBe(hookSecret);
  });

  it('a private file stays private: refused without a signature, served to the secret key', async () => {
    const url = `/api/storage/public/${dst.id}/${privatePath}`;
    expect((await env.app.inject({ method: 'GET', url })).statusCode).toBe(403);
    const withKey = await env.app.inject({ method: 'GET', url, headers: dst.sk });
    expect(withKey.statusCode).toBe(200);
    expect(withKey.rawPayload).toEqual(FILE_BYTES);
  });
});

describe('restored over the same project (replace=true)', () => {
  it('the restored project, damaged later, comes back whole; a restore that fails leaves it as it was', async () => {
    // The damage: a collection dropped, a user deleted, the German reset text removed.
    await must(env, 'DELETE', `/api/projects/${dst.id}/collections/notes`, dst.owner.auth);
    await must(env, 'DELETE', `/api/projects/${dst.id}/users/${bob.id}`, dst.owner.auth);
    await must(env, 'DELETE', `/api/projects/${dst.id}/mail/auth-templates/reset/de`, dst.owner.auth);
    const backup = await exportOf(env, dst);
    const names = async () => ((await must(env, 'GET', `/api/projects/${dst.id}/collections`, dst.owner.auth)).data as Array<{ name: string }>).map((c) => c.name).sort();
    expect(await names()).toEqual(['users']);

    // A plain import refuses a project that is not empty; a cut archive with replace changes nothing.
    expect((await importInto(env, dst, archive)).status).toBe(409);
    const cut = await importInto(env, dst, regzip(records(archive).slice(0, -1)), '?replace=true');
    expect(cut.status).toBe(400);
    expect(await names()).toEqual(['users']);
    expect(records(await exportOf(env, dst)).filter((r) => r.type !== 'header')).toEqual(records(backup).filter((r) => r.type !== 'header'));

    // The restore over it: the same project, the same ids.
    const res = await importInto(env, dst, archive, '?replace=true');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ replace: true, conflicts: [] });
    expect(await names()).toEqual(['notes', 'users']);
    const asBob = await loginAs(dst, bob.email);
    expect(await notesAs(asBob)).toEqual([{ title: 'a-public', pin: undefined, audit: undefined, status: 'approved' }]);
    expect((await notesAs(await loginAs(dst, alice.email))).map((n) => n.pin)).toEqual(['1234', '9999']);
    const totp = await signInWithTotp(dst, totpUser);
    expect(totp.status, JSON.stringify(totp.body)).toBe(200);
    expect(totp.body.data.user._id).toBe(totpUser.userId);
    expect((await lastResetMail(dst, alice.email)).subject).toBe('Acme: neues Passwort');
    // The quota counts what the project now holds, not what it held twice.
    const used = await env.ctx.db.admin.selectFrom('usage_counters').select(['metric', 'used']).where('subject_id', '=', dst.id).execute();
    expect(Number(used.find((u) => u.metric === 'storage_bytes')?.used)).toBe(FILE_BYTES.length);
  });
});
