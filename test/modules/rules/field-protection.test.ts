/**
 * Field protection (docs/rules.md, "Field protection"): hidden fields never reach a caller who
 * may not see them, on any read path, and read-only fields are set by the secret key only, on
 * any write path. Each threat is tried through the API and through raw SQL in a publishable
 * scope, where the database itself (column privileges, the partition's trigger) must refuse.
 */
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
const [alice, bob] = [objectId(), objectId()];
const as: Record<string, Record<string, string>> = {};
let partition: string;
let aliceDoc: string;

const PHONE = '+33 6 12 34 56 78 — Zoë';
const NOTES = 'flagged by moderation ✋';
const pk = (userId: string | null) => ({ projectId: p.id, userId, keyKind: 'publishable' as const });
const raw = <T>(userId: string | null, q: ReturnType<typeof sql<T>>) => env.ctx.db.tenant(pk(userId), (tx) => q.execute(tx));
const errorOf = (e: unknown) => ({ code: (e as { code?: string }).code, message: String((e as Error).message) });

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  as.alice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  as.bob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, bob)}` };
  const col = await createCollection(env, p, 'profiles', [
    { key: 'owner', type: 'String' },
    { key: 'name', type: 'String', searchable: true },
    { key: 'phone', type: 'String', hidden: 'owner' },
    { key: 'notes', type: 'String', hidden: 'secret' },
    { key: 'role', type: 'String', readOnly: true, default: 'member' },
    { key: 'karma', type: 'Number', readOnly: true },
  ], { enabled: true, mode: 'public-read', ownerField: 'owner' });
  partition = `documents_${col._id}`;
  const rt = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/profiles/realtime`, headers: p.owner.auth, payload: { enabled: true } });
  expect(rt.statusCode).toBe(200);
  const made = await A.post('/api/data/profiles', as.alice!, { name: 'Alice Ünal', phone: PHONE, role: 'member' });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  aliceDoc = made.body.data?._id ?? made.body._id;
  expect(made.body.data?.phone ?? made.body.phone).toBe(PHONE);
  const set = await A.patch(`/api/data/profiles/${aliceDoc}`, p.sk, { notes: NOTES, karma: 10, role: 'moderator' });
  expect(set.status, JSON.stringify(set.body)).toBe(200);
  expect(set.body.data?.notes ?? set.body.notes).toBe(NOTES);
});
afterAll(() => env.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's envelope, as a client reads it
type Res = { body: any };
const doc = (r: Res) => (r.body.data?._id ? r.body.data : r.body) as Record<string, unknown>;
const items = (r: Res) => r.body.data.items as Array<Record<string, unknown>>;

describe('hidden fields: a caller who may not see them never gets them', () => {
  it('the owner sees their owner-hidden field, not the secret one; others see neither; the secret key both', async () => {
    expect(doc(await A.get(`/api/data/profiles/${aliceDoc}`, as.alice!))).toMatchObject({ phone: PHONE, role: 'moderator', karma: 10 });
    expect(doc(await A.get(`/api/data/profiles/${aliceDoc}`, as.alice!))).not.toHaveProperty('notes');
    for (const who of [as.bob!, p.pk]) {
      const seen = doc(await A.get(`/api/data/profiles/${aliceDoc}`, who));
      expect(seen.name).toBe('Alice Ünal');
      expect(seen).not.toHaveProperty('phone');
      expect(seen).not.toHaveProperty('notes');
    }
    expect(doc(await A.get(`/api/data/profiles/${aliceDoc}`, p.sk))).toMatchObject({ phone: PHONE, notes: NOTES });
  });

  it('lists, search and populate leak nothing to another user', async () => {
    const listed = items(await A.get('/api/data/profiles', as.bob!));
    expect(listed.map((d) => d._id)).toContain(aliceDoc);
    expect(JSON.stringify(listed)).not.toContain('12 34');
    expect(JSON.stringify(listed)).not.toContain('moderation');
    const found = await A.get('/api/data/profiles?search=Ünal', as.bob!);
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(JSON.stringify(found.body)).not.toContain('12 34');
    expect(items(await A.get('/api/data/profiles', as.alice!)).find((d) => d._id === aliceDoc)).toMatchObject({ phone: PHONE });
    await createCollection(env, p, 'mentions', [{ key: 'author', type: 'String' }, { key: 'who', type: 'Ref', ref: 'profiles' }],
      { enabled: true, mode: 'public-read', ownerField: 'author' });
    const m = await A.post('/api/data/mentions', as.bob!, { who: aliceDoc });
    expect(m.status).toBe(201);
    const populated = await A.get('/api/data/mentions?populate=who', as.bob!);
    expect(items(populated)[0]!.who).toMatchObject({ _id: aliceDoc, name: 'Alice Ünal' });
    expect(JSON.stringify(populated.body)).not.toContain('12 34');
    expect(JSON.stringify((await A.get('/api/data/mentions?populate=who', p.sk)).body)).toContain(NOTES);
  });

  it('a filter, sort or aggregate on a hidden field is refused (no oracle), for every key', async () => {
    for (const url of ['/api/data/profiles?phone=x', '/api/data/profiles?sort=phone', '/api/data/profiles/aggregate?groupBy=notes', '/api/data/profiles/aggregate?min=notes']) {
      for (const who of [as.bob!, p.sk]) {
        const r = await A.get(url, who);
        expect(r.status, url).toBe(400);
        expect(r.body.code ?? r.body.error?.code ?? JSON.stringify(r.body)).toMatch(/field_hidden/);
      }
    }
  });

  it('a batch answers the owner with her owner-hidden field and never the secret one', async () => {
    const batch = await A.post('/api/data/batch', as.alice!, { operations: [{ op: 'update', collection: 'profiles', id: aliceDoc, data: { name: 'Alice Ünal' } }] });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    const text = JSON.stringify(batch.body);
    expect(text).toContain('12 34');
    expect(text).not.toContain('moderation');
  });

  it('the change stream (realtime, webhooks) never carries a hidden value', async () => {
    const rows = await env.ctx.db.admin.selectFrom('changes' as never).select(['data' as never]).where('doc_id' as never, '=', aliceDoc as never).execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain('12 34');
    expect(JSON.stringify(rows)).not.toContain('moderation');
  });

  it('raw SQL in a publishable scope cannot select the hidden values, even the owner', async () => {
    for (const who of [alice, bob]) {
      const e = await raw(who, sql`SELECT private, secret FROM ${sql.table(partition)}`).catch(errorOf);
      expect(e).toMatchObject({ code: '42501' });
      const e2 = await raw(who, sql`SELECT * FROM documents`).catch(errorOf);
      expect(e2).toMatchObject({ code: '42501' });
    }
    const own = await raw(alice, sql<{ p: unknown }>`SELECT plinth_own_private(collection_id, id) AS p FROM ${sql.table(partition)}`);
    expect(own.rows[0]!.p).toEqual({ phone: PHONE });
    const other = await raw(bob, sql<{ p: unknown }>`SELECT plinth_own_private(collection_id, id) AS p FROM ${sql.table(partition)} WHERE id = ${aliceDoc}`);
    expect(other.rows[0]!.p).toBeNull();
  });

  it('an export holds every hidden value, and an import splits them again', async () => {
    const exp = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/export`, headers: p.owner.auth });
    expect(exp.statusCode).toBe(200);
    const text = exp.headers['content-encoding'] === 'gzip' || exp.rawPayload[0] === 0x1f ? gunzipSync(exp.rawPayload).toString('utf8') : exp.body;
    expect(text).toContain(NOTES);
    expect(text).toContain('12 34');
  });
});

describe('read-only fields: a client cannot set or change them', () => {
  it('through create, update and batch, with the publishable key', async () => {
    const create = await A.post('/api/data/profiles', as.bob!, { name: 'Bob', role: 'admin' });
    expect(create.status).toBe(403);
    expect(JSON.stringify(create.body)).toMatch(/field_read_only/);
    const update = await A.patch(`/api/data/profiles/${aliceDoc}`, as.alice!, { role: 'admin' });
    expect(update.status).toBe(403);
    const bump = await A.patch(`/api/data/profiles/${aliceDoc}`, as.alice!, { karma: 9999 });
    expect(bump.status).toBe(403);
    const batch = await A.post('/api/data/batch', as.alice!, { operations: [
      { op: 'update', collection: 'profiles', id: aliceDoc, data: { name: 'Alice' } },
      { op: 'update', collection: 'profiles', id: aliceDoc, data: { role: 'admin' } },
    ] });
    expect(batch.status).toBe(403);
    const now = doc(await A.get(`/api/data/profiles/${aliceDoc}`, p.sk));
    expect(now).toMatchObject({ name: 'Alice Ünal', role: 'moderator', karma: 10 });
  });

  it('a client may create with the default and edit other fields; the value stays', async () => {
    const made = await A.post('/api/data/profiles', as.bob!, { name: 'Bob', role: 'member' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const edit = await A.patch(`/api/data/profiles/${aliceDoc}`, as.alice!, { name: 'Alice Ü.', phone: '+1 555' });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect(doc(edit)).toMatchObject({ name: 'Alice Ü.', phone: '+1 555', role: 'moderator' });
    expect(doc(edit)).not.toHaveProperty('notes');
    expect(doc(await A.get(`/api/data/profiles/${aliceDoc}`, p.sk))).toMatchObject({ notes: NOTES, phone: '+1 555', karma: 10 });
  });

  it('raw SQL in a publishable scope: the trigger refuses the change, and the hidden columns are not writable', async () => {
    const e = await raw(alice, sql`UPDATE documents SET data = data || '{"role":"admin"}' WHERE id = ${aliceDoc}`).catch(errorOf);
    expect(e).toMatchObject({ code: 'PR403' });
    const e2 = await raw(alice, sql`UPDATE documents SET secret = '{}', private = '{}' WHERE id = ${aliceDoc}`).catch(errorOf);
    expect(e2).toMatchObject({ code: '42501' });
    const e3 = await raw(alice, sql`UPDATE documents SET data = data || '{"karma":1}' WHERE id = ${aliceDoc}`).catch(errorOf);
    expect(e3).toMatchObject({ code: 'PR403' });
  });
});

describe('the users collection: a user cannot give themself a role', () => {
  beforeAll(async () => {
    await createCollection(env, p, 'users', [
      { key: 'email', type: 'String', required: true, unique: true },
      { key: 'password', type: 'String', required: true },
      { key: 'nickname', type: 'String' },
      { key: 'role', type: 'String', readOnly: true, default: 'reader' },
      { key: 'ssn', type: 'String', hidden: 'secret' },
    ]);
  });

  it('not at sign-up, not through update-profile, not through raw SQL', async () => {
    const evil = await A.post('/api/userAuth/signup', p.pk, { email: 'eve@x.test', password: 'correct horse battery', role: 'admin' });
    expect(evil.status).toBe(403);
    const ok = await A.post('/api/userAuth/signup', p.pk, { email: 'zoe@x.test', password: 'correct horse battery', nickname: 'Zoë' });
    expect(ok.status, JSON.stringify(ok.body)).toBeLessThan(300);
    const user = await env.ctx.db.admin.selectFrom('app_users').select(['id', 'data']).where('project_id', '=', p.id).where('email', '=', 'zoe@x.test').executeTakeFirstOrThrow();
    expect(user.data).toMatchObject({ role: 'reader' });
    const token = await makeUserToken(env.ctx, p, user.id);
    const h = { ...p.pk, authorization: `Bearer ${token}` };
    expect((await A.put('/api/userAuth/update-profile', h, { nickname: 'Zo' })).status).toBe(200);
    const up = await A.put('/api/userAuth/update-profile', h, { role: 'admin' });
    expect(up.status).toBe(403);
    const e = await raw(user.id, sql`UPDATE app_users SET data = data || '{"role":"admin"}' WHERE id = ${user.id}`).catch(errorOf);
    expect(e).toMatchObject({ code: 'PR403' });
    const after = await env.ctx.db.admin.selectFrom('app_users').select('data').where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(after.data).toMatchObject({ role: 'reader', nickname: 'Zo' });
  });

  it('a secret-hidden profile field is not in /me nor in a public profile', async () => {
    const user = await env.ctx.db.admin.selectFrom('app_users').select('id').where('project_id', '=', p.id).where('email', '=', 'zoe@x.test').executeTakeFirstOrThrow();
    await env.ctx.db.admin.updateTable('app_users').set({ data: sql`data || '{"ssn":"123-45"}'` as never }).where('id', '=', user.id).execute();
    const h = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, user.id)}` };
    const me = await A.get('/api/userAuth/me', h);
    expect(me.status).toBe(200);
    expect(JSON.stringify(me.body)).not.toContain('123-45');
    expect(JSON.stringify(me.body)).toContain('Zo');
  });
});

describe('schema changes move the values', () => {
  it('hiding a field takes it out of data; un-hiding puts it back; the usage follows the stored size', async () => {
    await createCollection(env, p, 'notes', [{ key: 'owner', type: 'String' }, { key: 'body', type: 'String' }],
      { enabled: true, mode: 'public-read', ownerField: 'owner' });
    const n = await A.post('/api/data/notes', as.alice!, { body: 'ça va ? 😀' });
    expect(n.status).toBe(201);
    const id = doc(n)._id as string;
    const drift = async () => {
      const r = await sql<{ d: string }>`
        SELECT ((SELECT used FROM usage_counters WHERE subject_id = ${p.id} AND metric = 'db_bytes')
                - (SELECT sum(size_bytes) FROM documents WHERE project_id = ${p.id}))::text AS d`.execute(env.ctx.db.admin);
      return Number(r.rows[0]!.d);
    };
    const before = await drift();
    const schema = (hidden?: string) => ({ schema: [{ key: 'owner', type: 'String' }, { key: 'body', type: 'String', ...(hidden ? { hidden } : {}) }] });
    const hide = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/notes`, headers: p.owner.auth, payload: schema('owner') });
    expect(hide.statusCode, hide.body).toBe(200);
    expect(doc(await A.get(`/api/data/notes/${id}`, as.bob!))).not.toHaveProperty('body');
    expect(doc(await A.get(`/api/data/notes/${id}`, as.alice!))).toMatchObject({ body: 'ça va ? 😀' });
    expect(await drift()).toBe(before);
    const unhide = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/notes`, headers: p.owner.auth, payload: schema() });
    expect(unhide.statusCode).toBe(200);
    expect(doc(await A.get(`/api/data/notes/${id}`, as.bob!))).toMatchObject({ body: 'ça va ? 😀' });
    expect(await drift()).toBe(before);
  });

  it('refuses a hidden field that is unique, searchable, indexed, nested or used by a rule', async () => {
    for (const f of [{ unique: true }, { searchable: true }, { index: true }]) {
      const r = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth,
        payload: { name: `bad${Object.keys(f)[0]}`, schema: [{ key: 'x', type: 'String', hidden: 'owner', ...f }] } });
      expect(r.statusCode, JSON.stringify(f)).toBe(400);
    }
    const nested = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth,
      payload: { name: 'badnested', schema: [{ key: 'o', type: 'Object', fields: [{ key: 'x', type: 'String', readOnly: true }] }] } });
    expect(nested.statusCode).toBe(400);
    const rule = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/profiles/rules`, headers: p.owner.auth, payload: { list: 'phone = "1"' } });
    expect(rule.statusCode).toBe(400);
    expect(rule.body).toMatch(/hidden/);
  });
});
