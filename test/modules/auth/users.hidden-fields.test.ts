/**
 * Hidden fields of the users collection (docs/rules.md, "The users collection"), enforced by
 * the database and not only by the auth routes: the values live in app_users' `private`
 * ("owner") and `secret` columns, which the publishable role cannot read. The threats: raw SQL
 * in a publishable scope reading another user's (or its own) hidden values, the values leaking
 * through `data` to public profiles, populate or a rule's lookup, a schema change leaving
 * existing values readable, and a backup losing them. The account itself still gets its
 * "owner" fields (/me, sign-up, login, update-profile), and only the secret key / operator the
 * "secret" ones.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, USERS_FIELDS, type TestProject } from '../../helpers/fixtures.js';
import { exportOf, importInto } from '../backup/helpers.js';
import { api, createCollection } from '../data/helpers.js';
import { captureMail, PASSWORD, uniqueEmail } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
let alice: { id: string; email: string; auth: Record<string, string> };
let bob: { id: string; email: string; auth: Record<string, string> };
const PHONE = '+44 7700 900123';
const SSN = '078-05-1120';
const SCHEMA = (extra: Record<string, Record<string, unknown>> = {}) => [
  ...USERS_FIELDS,
  { key: 'phone', type: 'String', hidden: 'owner', ...extra.phone },
  { key: 'ssn', type: 'String', hidden: 'secret', ...extra.ssn },
  { key: 'city', type: 'String', ...extra.city },
];

const pk = (userId: string | null) => ({ projectId: p.id, userId, keyKind: 'publishable' as const });
const errorOf = (e: unknown) => ({ code: (e as { code?: string }).code, message: String((e as Error).message) });
const stored = (id: string) =>
  env.ctx.db.admin.selectFrom('app_users').select(['data', 'private', 'secret']).where('id', '=', id).executeTakeFirstOrThrow() as Promise<{
    data: Record<string, unknown>; private: Record<string, unknown> | null; secret: Record<string, unknown> | null;
  }>;
const setSchema = (schema: unknown[]) =>
  env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/users`, headers: p.owner.auth, payload: { schema } });

async function signUp(username: string) {
  const email = uniqueEmail(username);
  const res = await A.post('/api/userAuth/signup', { ...p.pk, 'x-refresh-token-mode': 'header' }, { email, password: PASSWORD, username, phone: PHONE, ssn: SSN, city: 'Leeds' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const user = res.body.data.user as Record<string, unknown>;
  // The sign-up answer is the account's own: its "owner" field, never the "secret" one.
  expect(user).toMatchObject({ username, phone: PHONE, city: 'Leeds' });
  expect(user.ssn).toBeUndefined();
  return { id: user._id as string, email, auth: { ...p.pk, authorization: `Bearer ${res.body.data.accessToken as string}` } };
}

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  captureMail(env);
  p = await makeProject(env.ctx);
  A = api(env);
  await createCollection(env, p, 'users', SCHEMA());
  await createCollection(env, p, 'posts', [{ key: 'author', type: 'Ref', ref: 'users' }, { key: 'title', type: 'String' }]);
  alice = await signUp('alice');
  bob = await signUp('bob');
});
afterAll(() => env.close());

describe('raw SQL in a publishable scope cannot read hidden profile fields', () => {
  it('selecting app_users.private or .secret is permission denied, even for the own row', async () => {
    for (const column of ['private', 'secret']) {
      const e = await env.ctx.db.read(pk(alice.id), (tx) => sql`SELECT ${sql.ref(column)} FROM app_users WHERE id = ${alice.id}`.execute(tx)).catch(errorOf);
      expect(e, column).toMatchObject({ code: '42501' });
      expect((e as { message: string }).message).toMatch(/permission denied/);
    }
  });

  it('data no longer holds the hidden values: they are in private / secret', async () => {
    const rows = await env.ctx.db.read(pk(bob.id), (tx) => sql<{ id: string; data: Record<string, unknown> }>`SELECT id, data FROM app_users`.execute(tx));
    expect(rows.rows.length).toBe(2);
    for (const r of rows.rows) {
      expect(r.data).toMatchObject({ city: 'Leeds' });
      expect(JSON.stringify(r.data)).not.toContain(PHONE);
      expect(JSON.stringify(r.data)).not.toContain(SSN);
    }
    const row = await stored(alice.id);
    expect(row.private).toEqual({ phone: PHONE });
    expect(row.secret).toEqual({ ssn: SSN });
  });

  it('a publishable write cannot put a hidden value back into data (the trigger moves it)', async () => {
    await env.ctx.db.tenant(pk(alice.id), (tx) => sql`UPDATE app_users SET data = data || '{"phone":"+1 555 0100"}' WHERE id = ${alice.id}`.execute(tx));
    const row = await stored(alice.id);
    expect(row.data.phone).toBeUndefined();
    expect(row.private).toEqual({ phone: '+1 555 0100' });
    await env.ctx.db.tenant(pk(alice.id), (tx) => sql`UPDATE app_users SET data = data || ${JSON.stringify({ phone: PHONE })}::jsonb WHERE id = ${alice.id}`.execute(tx));
  });
});

describe('who sees which hidden field', () => {
  it('the owner gets their "owner" fields in /me, login and update-profile, never the "secret" ones', async () => {
    const me = (await A.get('/api/userAuth/me', alice.auth)).body.data;
    expect(me).toMatchObject({ _id: alice.id, phone: PHONE, city: 'Leeds' });
    expect(me.ssn).toBeUndefined();
    const login = await A.post('/api/userAuth/login', p.pk, { email: alice.email, password: PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.data.user).toMatchObject({ phone: PHONE });
    expect(login.body.data.user.ssn).toBeUndefined();
    expect((await A.put('/api/userAuth/update-profile', alice.auth, { phone: '+44 1', city: 'York' })).status).toBe(200);
    const after = (await A.get('/api/userAuth/me', alice.auth)).body.data;
    expect(after).toMatchObject({ phone: '+44 1', city: 'York' });
    expect(after.ssn).toBeUndefined();
    expect((await stored(alice.id)).data.phone).toBeUndefined();
    expect((await A.put('/api/userAuth/update-profile', alice.auth, { phone: PHONE })).status).toBe(200);
  });

  it('public profiles and populate never carry a hidden field', async () => {
    const profile = await A.get('/api/userAuth/public/alice', bob.auth);
    expect(profile.status).toBe(200);
    expect(JSON.stringify(profile.body)).not.toContain(PHONE);
    const post = await A.post('/api/data/posts', p.sk, { author: alice.id, title: 'hello' });
    expect(post.status, JSON.stringify(post.body)).toBe(201);
    const postId = (post.body.data?._id ?? post.body._id) as string;
    const populated = await A.get(`/api/data/posts/${postId}?populate=author`, bob.auth);
    expect(populated.body.data.author).toMatchObject({ _id: alice.id });
    expect(JSON.stringify(populated.body.data.author)).not.toContain(PHONE);
    expect(JSON.stringify(populated.body.data.author)).not.toContain(SSN);
    // The secret key's populate carries both, as before.
    const bySecret = await A.get(`/api/data/posts/${postId}?populate=author`, p.sk);
    expect(bySecret.body.data.author).toMatchObject({ _id: alice.id, phone: PHONE, ssn: SSN });
  });

  it('the operator\'s users list shows both, as before', async () => {
    const list = await A.get(`/api/projects/${p.id}/users?q=alice`, p.owner.auth);
    expect(list.status).toBe(200);
    expect(list.body.data.items[0]).toMatchObject({ _id: alice.id, phone: PHONE, ssn: SSN });
  });
});

describe('a schema change moves existing values', () => {
  it('a field made hidden leaves data for every existing user; made visible again, it comes back', async () => {
    const hide = await setSchema(SCHEMA({ city: { hidden: 'owner' }, ssn: { hidden: 'owner' } }));
    expect(hide.statusCode, hide.body).toBe(200);
    const row = await stored(bob.id);
    expect(row.data.city).toBeUndefined();
    expect(row.private).toEqual({ phone: PHONE, city: 'Leeds', ssn: SSN });
    expect(row.secret).toBeNull();
    const raw = await env.ctx.db.read(pk(alice.id), (tx) => sql<{ data: Record<string, unknown> }>`SELECT data FROM app_users WHERE id = ${bob.id}`.execute(tx));
    expect(raw.rows[0]!.data.city).toBeUndefined();
    // ssn is now an "owner" field: its owner sees it.
    expect((await A.get('/api/userAuth/me', bob.auth)).body.data).toMatchObject({ city: 'Leeds', ssn: SSN });

    const back = await setSchema(SCHEMA());
    expect(back.statusCode, back.body).toBe(200);
    const again = await stored(bob.id);
    expect(again.data).toMatchObject({ city: 'Leeds' });
    expect(again.private).toEqual({ phone: PHONE });
    expect(again.secret).toEqual({ ssn: SSN });
    expect((await A.get('/api/userAuth/me', bob.auth)).body.data.ssn).toBeUndefined();
  });
});

describe('a backup keeps hidden profile fields', () => {
  it('export carries them, and a restored copy has them split again', async () => {
    const archive = await exportOf(env, p);
    const copy = await makeProject(env.ctx, p.owner, 'Copy');
    const res = await importInto(env, copy, archive, '?newIds=true');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const rows = await env.ctx.db.admin.selectFrom('app_users').select(['email', 'data', 'private', 'secret']).where('project_id', '=', copy.id).execute();
    const a = rows.find((r) => r.email === alice.email)!;
    expect(a.private).toEqual({ phone: PHONE });
    expect(a.secret).toEqual({ ssn: SSN });
    expect(a.data.phone).toBeUndefined();
    expect(a.data.ssn).toBeUndefined();
    const login = await A.post('/api/userAuth/login', copy.pk, { email: alice.email, password: PASSWORD });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.data.user).toMatchObject({ phone: PHONE });
    expect(login.body.data.user.ssn).toBeUndefined();
  });
});
