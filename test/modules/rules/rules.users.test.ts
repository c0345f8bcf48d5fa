/**
 * Access rules of the users collection (docs/rules.md, "The users collection"): compiled into
 * app_users' own policies, per project. Each threat is tried through the API and through raw
 * SQL in a publishable scope: a user reading another's record when the rule forbids it, a
 * user giving themself a read-only role, a rule naming a hidden field, another project's
 * users, and a password hash through any of them.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { hashPassword } from '../../../src/lib/passwords.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let other: TestProject;
let A: ReturnType<typeof api>;
const [alice, bob, carol, stranger] = [objectId(), objectId(), objectId(), objectId()];
const as: Record<string, Record<string, string>> = {};
const PASSWORD = 'correct horse battery';
const PHONE = '+44 7700 900123';
const SSN = '078-05-1120';
const WORKED = 'id = @auth.id || @auth.role = "admin"';

const USERS = [
  { key: 'email', type: 'String', required: true, unique: true },
  { key: 'password', type: 'String', required: true },
  { key: 'username', type: 'String' },
  { key: 'role', type: 'String', readOnly: true, default: 'reader' },
  { key: 'phone', type: 'String', hidden: 'owner' },
  { key: 'ssn', type: 'String', hidden: 'secret' },
];

async function setRules(project: TestProject, name: string, rules: Record<string, string | null>) {
  const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${project.id}/collections/${name}/rules`, headers: project.owner.auth, payload: rules });
  return { status: res.statusCode, body: res.json() };
}
const pk = (project: TestProject, userId: string | null) => ({ projectId: project.id, userId, keyKind: 'publishable' as const });
/** The users a publishable caller sees through raw SQL (sorted ids). */
const rawUsers = (userId: string | null, project = p) =>
  env.ctx.db.read(pk(project, userId), (tx) => sql<{ id: string }>`SELECT id FROM app_users ORDER BY id`.execute(tx).then((r) => r.rows.map((x) => x.id)));
const rawWrite = (userId: string | null, q: ReturnType<typeof sql>) => env.ctx.db.tenant(pk(p, userId), (tx) => q.execute(tx)).then((r) => Number(r.numAffectedRows));
const errorOf = (e: unknown) => ({ code: (e as { code?: string }).code, message: String((e as Error).message) });
const profile = (username: string, who: Record<string, string>) => A.get(`/api/userAuth/public/${username}`, who);
const dataOf = async (id: string) => (await env.ctx.db.admin.selectFrom('app_users').select('data').where('id', '=', id).executeTakeFirstOrThrow()).data as Record<string, unknown>;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  other = await makeProject(env.ctx, undefined, 'Other project');
  A = api(env);
  await createCollection(env, p, 'users', USERS);
  await createCollection(env, other, 'users', USERS);
  const hash = await hashPassword(PASSWORD);
  const people = [
    { id: alice, project: p, name: 'alice', role: 'reader' },
    { id: bob, project: p, name: 'bob', role: 'reader' },
    { id: carol, project: p, name: 'carol', role: 'admin' },
    { id: stranger, project: other, name: 'stranger', role: 'admin' },
  ];
  for (const u of people) {
    const data = { username: u.name, role: u.role, phone: PHONE, ssn: SSN };
    await env.ctx.db.admin.insertInto('app_users').values({ id: u.id, project_id: u.project.id, email: `${u.name}@x.test`, password_hash: hash, data: JSON.stringify(data) } as never).execute();
    as[u.name] = { ...u.project.pk, authorization: `Bearer ${await makeUserToken(env.ctx, u.project, u.id)}` };
  }
  // A document collection that references users (populate) and one whose rule looks users up.
  await createCollection(env, p, 'posts', [{ key: 'owner', type: 'String' }, { key: 'author', type: 'Ref', ref: 'users' }, { key: 'title', type: 'String' }],
    { enabled: true, mode: 'public-read', ownerField: 'owner' });
  await createCollection(env, p, 'notices', [{ key: 'author', type: 'String' }, { key: 'text', type: 'String' }]);
  // Notices are shown when written by an admin: a lookup into the users collection.
  const lookup = await setRules(p, 'notices', { list: '@collection.users(id = $outer.author && role = "admin")' });
  expect(lookup.status, JSON.stringify(lookup.body)).toBe(200);
  expect(lookup.body.data.sql.list).toContain('FROM "app_users" "l1"');
});
afterAll(() => env.close());

describe('without users rules: today\'s behaviour', () => {
  it('public profiles, populate and raw SQL see every user of the project, never another project\'s', async () => {
    expect((await profile('bob', p.pk)).status).toBe(200);
    expect((await profile('bob', as.alice!)).body.data).toMatchObject({ _id: bob, username: 'bob', role: 'reader' });
    expect(await rawUsers(alice)).toEqual([alice, bob, carol].sort());
    expect(await rawUsers(null)).toEqual([alice, bob, carol].sort());
    expect(await rawUsers(stranger, other)).toEqual([stranger]);
    expect((await profile('stranger', as.alice!)).status).toBe(404);
  });

  it('a user changes their own profile, never their read-only role (update-profile and raw SQL)', async () => {
    expect((await A.put('/api/userAuth/update-profile', as.alice!, { username: 'alice' })).status).toBe(200);
    const up = await A.put('/api/userAuth/update-profile', as.alice!, { role: 'admin' });
    expect(up.status).toBe(403);
    expect(up.body.code).toBe('field_read_only');
    const e = await rawWrite(alice, sql`UPDATE app_users SET data = data || '{"role":"admin"}' WHERE id = ${alice}`).catch(errorOf);
    expect(e).toMatchObject({ code: 'PR403' });
    expect(await dataOf(alice)).toMatchObject({ role: 'reader' });
  });
});

describe('a password hash is never readable with the publishable key', () => {
  it('raw SQL in a publishable scope gets permission denied, even for the own row', async () => {
    const e = await env.ctx.db.read(pk(p, alice), (tx) => sql`SELECT password_hash FROM app_users WHERE id = ${alice}`.execute(tx)).catch(errorOf);
    expect(e).toMatchObject({ code: '42501' });
    expect((e as { message: string }).message).toMatch(/permission denied/);
  });

  it('a rule cannot name the password, a hidden field, or a hidden @auth field; a create rule is refused', async () => {
    for (const [rule, position] of [['password = "x"', 1], ["id = @auth.id || phone = \"1\"", 18], ['ssn != null', 1], ['@auth.ssn = "1"', 1]] as const) {
      const r = await setRules(p, 'users', { view: rule });
      expect(r.status, rule).toBe(400);
      expect(r.body).toMatchObject({ code: 'rule_invalid', action: 'view', position });
      expect(r.body.message).toMatch(/hidden/);
    }
    const create = await setRules(p, 'users', { create: '@data.role = "reader"' });
    expect(create.status).toBe(400);
    expect(create.body).toMatchObject({ code: 'rule_invalid', action: 'create', position: 1 });
    expect((await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/collections/users/rules`, headers: p.owner.auth })).json().data.rules.view).toBeNull();
  });
});

describe(`the worked example: view: ${WORKED}`, () => {
  let postByBob: string;
  let noticeByCarol: string;
  beforeAll(async () => {
    const set = await setRules(p, 'users', { view: WORKED });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const posted = await A.post('/api/data/posts', as.alice!, { author: bob, title: 'about bob' });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    postByBob = posted.body.data?._id ?? posted.body._id;
    const notice = await A.post('/api/data/notices', p.sk, { author: carol, text: 'maintenance tonight' });
    expect(notice.status).toBe(201);
    noticeByCarol = notice.body.data?._id ?? notice.body._id;
  });

  it('compiles to a SELECT policy of app_users for this project only', async () => {
    const got = (await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/collections/users/rules`, headers: p.owner.auth })).json().data;
    expect(got.sql.view).toBe(`("id" = plinth_user_id() OR plinth_txt((SELECT plinth_auth_user()), 'role') = 'admin')`);
    const read = got.policies.find((x: { name: string }) => x.name === `app_users_read_${p.id}`);
    expect(read).toMatchObject({ command: 'SELECT', roles: ['plinth_api_publishable'] });
    expect(read.using).toContain(`'${p.id}'`);
    expect(read.using).toContain('plinth_auth_user()');
    expect(got.warnings).toEqual([]);
  });

  it('through the API: a user does not read another user\'s record; an admin does; the own account still works', async () => {
    expect((await profile('bob', as.alice!)).status).toBe(404);
    expect((await profile('bob', p.pk)).status).toBe(404);
    expect((await profile('bob', as.bob!)).status).toBe(200);
    expect((await profile('bob', as.carol!)).body.data).toMatchObject({ _id: bob, username: 'bob' });
    // populate: the referenced user for who the rule admits, else null; never a hidden field.
    expect((await A.get(`/api/data/posts/${postByBob}?populate=author`, as.alice!)).body.data.author).toBeNull();
    const byAdmin = (await A.get(`/api/data/posts/${postByBob}?populate=author`, as.carol!)).body.data.author;
    expect(byAdmin).toMatchObject({ _id: bob, username: 'bob' });
    expect(JSON.stringify(byAdmin)).not.toContain(PHONE);
    expect(JSON.stringify(byAdmin)).not.toContain(SSN);
    expect(JSON.stringify(byAdmin)).not.toContain('argon');
    expect((await A.get(`/api/data/posts/${postByBob}?populate=author`, as.bob!)).body.data.author).toMatchObject({ _id: bob });
    expect((await A.get('/api/data/posts?populate=author', as.alice!)).body.data.items[0].author).toBeNull();
    // The own account and signing in are the auth flows': not governed by the rule.
    expect((await A.get('/api/userAuth/me', as.alice!)).body.data).toMatchObject({ _id: alice, phone: PHONE });
    const login = await A.post('/api/userAuth/login', p.pk, { email: 'bob@x.test', password: PASSWORD });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
  });

  it('through raw SQL: the same rows, and none of another project', async () => {
    expect(await rawUsers(alice)).toEqual([alice]);
    expect(await rawUsers(null)).toEqual([]);
    expect(await rawUsers(carol)).toEqual([alice, bob, carol].sort());
    const sneaky = await env.ctx.db.read(pk(p, alice), (tx) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM app_users WHERE id = ${bob} OR project_id = ${other.id}`.execute(tx));
    expect(sneaky.rows[0]!.n).toBe(0);
    // The other project has no users rules: its callers see its users, and only them.
    expect(await rawUsers(null, other)).toEqual([stranger]);
    expect(await rawUsers(stranger, other)).toEqual([stranger]);
  });

  it('a lookup into users (@collection.users) reads app_users under the users rule for the caller', async () => {
    const ids = (r: { body: { data: { items: Array<{ _id: string }> } } }) => r.body.data.items.map((d) => d._id);
    // carol may see her own user row (an admin): the notice's author is an admin.
    expect(ids(await A.get('/api/data/notices', as.carol!))).toEqual([noticeByCarol]);
    // alice may not see carol's row, so the lookup finds nothing for her.
    expect(ids(await A.get('/api/data/notices', as.alice!))).toEqual([]);
    const notices = (await env.ctx.db.admin.selectFrom('collections').select('id').where('project_id', '=', p.id).where('name', '=', 'notices').executeTakeFirstOrThrow()).id;
    const raw = (userId: string) => env.ctx.db.read(pk(p, userId), (tx) => sql<{ id: string }>`SELECT id FROM ${sql.table(`documents_${notices}`)}`.execute(tx).then((r) => r.rows.map((x) => x.id)));
    expect(await raw(carol)).toEqual([noticeByCarol]);
    expect(await raw(alice)).toEqual([]);
  });

  it('without the view rule again, everyone reads users (the lookup too)', async () => {
    expect((await setRules(p, 'users', { view: null })).status).toBe(200);
    try {
      expect((await profile('bob', as.alice!)).status).toBe(200);
      expect(await rawUsers(alice)).toEqual([alice, bob, carol].sort());
      expect((await A.get('/api/data/notices', as.alice!)).body.data.items.map((d: { _id: string }) => d._id)).toEqual([noticeByCarol]);
      const policies = (await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/collections/users/rules`, headers: p.owner.auth })).json().data.policies;
      expect(policies.map((x: { name: string }) => x.name)).not.toContain(`app_users_read_${p.id}`);
    } finally {
      expect((await setRules(p, 'users', { view: WORKED })).status).toBe(200);
    }
  });
});

describe('update and delete rules', () => {
  afterAll(async () => {
    expect((await setRules(p, 'users', { update: null, delete: null })).status).toBe(200);
  });

  it('by default (rules set, no update rule) a user updates only their own row, never their role', async () => {
    expect((await A.put('/api/userAuth/update-profile', as.alice!, { username: 'alice2' })).status).toBe(200);
    expect(await dataOf(alice)).toMatchObject({ username: 'alice2', role: 'reader' });
    expect((await A.put('/api/userAuth/update-profile', as.alice!, { role: 'admin' })).status).toBe(403);
    expect((await rawWrite(carol, sql`UPDATE app_users SET data = data || '{"username":"hacked"}' WHERE id = ${bob}`))).toBe(0);
    const e = await rawWrite(alice, sql`UPDATE app_users SET data = data || '{"role":"admin"}' WHERE id = ${alice}`).catch(errorOf);
    expect(e).toMatchObject({ code: 'PR403' });
    expect(await rawWrite(alice, sql`DELETE FROM app_users WHERE id = ${alice}`)).toBe(0);
    expect(await dataOf(alice)).toMatchObject({ role: 'reader' });
  });

  it('update: @auth.role = "admin": users may not change their profile; admins change anyone\'s but never a role', async () => {
    expect((await setRules(p, 'users', { update: '@auth.role = "admin"' })).status).toBe(200);
    const refused = await A.put('/api/userAuth/update-profile', as.alice!, { username: 'alice3' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('rule_denied');
    expect(await rawWrite(alice, sql`UPDATE app_users SET data = data || '{"username":"alice3"}' WHERE id = ${alice}`)).toBe(0);
    expect(await dataOf(alice)).toMatchObject({ username: 'alice2' });
    expect((await A.put('/api/userAuth/update-profile', as.carol!, { username: 'carol2' })).status).toBe(200);
    expect(await rawWrite(carol, sql`UPDATE app_users SET data = data || '{"username":"bobby"}' WHERE id = ${bob}`)).toBe(1);
    expect(await dataOf(bob)).toMatchObject({ username: 'bobby', role: 'reader' });
    const e = await rawWrite(carol, sql`UPDATE app_users SET data = data || '{"role":"admin"}' WHERE id = ${bob}`).catch(errorOf);
    expect(e).toMatchObject({ code: 'PR403' });
    // No column but the profile: not the email, not the password hash.
    const col = await rawWrite(carol, sql`UPDATE app_users SET email = 'x@x.test' WHERE id = ${bob}`).catch(errorOf);
    expect(col).toMatchObject({ code: '42501' });
    expect(await rawWrite(carol, sql`UPDATE app_users SET data = data || '{"username":"x"}' WHERE id = ${stranger}`)).toBe(0);
  });

  it('delete: id = @auth.id lets a user delete only themself through raw SQL', async () => {
    const temp = objectId();
    await env.ctx.db.admin.insertInto('app_users').values({ id: temp, project_id: p.id, email: 'temp@x.test', password_hash: 'x', data: '{}' } as never).execute();
    expect((await setRules(p, 'users', { delete: 'id = @auth.id' })).status).toBe(200);
    expect(await rawWrite(temp, sql`DELETE FROM app_users WHERE id = ${bob}`)).toBe(0);
    // The read rule hides the others, the delete rule admits only the own row.
    expect(await rawWrite(carol, sql`DELETE FROM app_users WHERE id = ${temp}`)).toBe(0);
    expect(await rawWrite(temp, sql`DELETE FROM app_users WHERE id = ${temp}`)).toBe(1);
    expect(await env.ctx.db.admin.selectFrom('app_users').select('id').where('project_id', '=', p.id).execute()).toHaveLength(3);
  });
});

describe('loops and project isolation', () => {
  it('a users rule and a collection rule that look each other up are refused (rule_cycle)', async () => {
    await createCollection(env, p, 'teams', [{ key: 'member', type: 'String' }]);
    expect((await setRules(p, 'teams', { list: '@collection.users(id = $outer.member)' })).status).toBe(200);
    const loop = await setRules(p, 'users', { view: '@collection.teams(member = $outer.id)' });
    expect(loop.status).toBe(400);
    expect(loop.body.code).toBe('rule_cycle');
    expect(loop.body.message).toMatch(/users/);
  });

  it('another project\'s users rules never apply here, and this project\'s never there', async () => {
    expect((await setRules(other, 'users', { view: 'id = @auth.id' })).status).toBe(200);
    expect(await rawUsers(carol)).toEqual([alice, bob, carol].sort());
    expect(await rawUsers(stranger, other)).toEqual([stranger]);
    expect(await rawUsers(null, other)).toEqual([]);
    // A rule of this project naming users reads only this project's users.
    const r = await setRules(p, 'users', { view: 'email = "stranger@x.test" || id = @auth.id' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await rawUsers(null)).toEqual([]);
    expect(await rawUsers(alice)).toEqual([alice]);
    expect((await setRules(p, 'users', { view: WORKED })).status).toBe(200);
  });

  it('deleting the users collection takes its policies off app_users', async () => {
    const del = await env.app.inject({ method: 'DELETE', url: `/api/projects/${other.id}/collections/users`, headers: other.owner.auth });
    expect(del.statusCode, del.body).toBeLessThan(300);
    const left = await sql<{ policyname: string }>`SELECT policyname FROM pg_policies WHERE tablename = 'app_users' AND policyname LIKE ${`%${other.id}`}`.execute(env.ctx.db.admin);
    expect(left.rows).toEqual([]);
    expect(await rawUsers(null, other)).toEqual([stranger]);
  });
});
