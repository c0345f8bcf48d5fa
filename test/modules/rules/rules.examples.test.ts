/**
 * The three worked examples of docs/rules.md, each proven twice: through the API, and through
 * raw SQL in a publishable scope that tries to read and write what the rule forbids (as
 * data.rls-bypass does for the owner rules). Plus the attacks: a rule that would let a user
 * take a document, a lookup into another project, a rule carrying SQL.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
const [alice, bob, carol, dave] = [objectId(), objectId(), objectId(), objectId()];
const as: Record<string, Record<string, string>> = {};
const ids: Record<string, string> = {};

async function setRules(project: TestProject, name: string, rules: Record<string, string | null>) {
  const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${project.id}/collections/${name}/rules`, headers: project.owner.auth, payload: rules });
  return { status: res.statusCode, body: res.json() };
}
const asPk = (userId: string | null) => ({ projectId: p.id, userId, keyKind: 'publishable' as const });
const part = (name: string) => sql.table(`documents_${ids[name]}`);
const rawIds = (userId: string | null, name: string) =>
  env.ctx.db.read(asPk(userId), (tx) => sql<{ id: string }>`SELECT id FROM ${part(name)} ORDER BY id`.execute(tx).then((r) => r.rows.map((x) => x.id)));
const items = (r: { body: { data: { items: Array<{ _id: string }> } } }) => r.body.data.items.map((d) => d._id).sort();

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  for (const [name, id] of Object.entries({ alice, bob, carol, dave })) {
    as[name] = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, id)}` };
  }
  ids.users = (await createCollection(env, p, 'users', [
    { key: 'email', type: 'String', required: true },
    { key: 'password', type: 'String', required: true },
    { key: 'role', type: 'String' },
  ]))._id;
  const role = { alice: 'reader', bob: 'editor', carol: 'admin', dave: 'reader' };
  for (const [name, id] of Object.entries({ alice, bob, carol, dave })) {
    await env.ctx.db.admin.insertInto('app_users').values({ id, project_id: p.id, email: `${name}@x.test`, password_hash: 'x', data: JSON.stringify({ role: role[name as keyof typeof role] }) } as never).execute();
  }
});
afterAll(() => env.close());

describe('blog drafts: published = true || author = @auth.id', () => {
  let published: string;
  let draft: string;
  beforeAll(async () => {
    ids.posts = (await createCollection(env, p, 'posts', [
      { key: 'title', type: 'String', searchable: true },
      { key: 'published', type: 'Boolean' },
      { key: 'author', type: 'String' },
    ]))._id;
    const own = 'author = @auth.id';
    const set = await setRules(p, 'posts', { list: 'published = true || author = @auth.id', create: own, update: own, delete: own });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    published = (await A.post('/api/data/posts', as.alice!, { title: 'hello', published: true, author: alice })).body._id;
    draft = (await A.post('/api/data/posts', as.alice!, { title: 'draft', published: false, author: alice })).body._id;
    expect(published && draft).toBeTruthy();
  });

  it('through the API: others see published posts only; the author also her drafts', async () => {
    expect(items(await A.get('/api/data/posts', p.pk))).toEqual([published]);
    expect(items(await A.get('/api/data/posts', as.bob!))).toEqual([published]);
    expect(items(await A.get('/api/data/posts', as.alice!))).toEqual([published, draft].sort());
    expect((await A.get(`/api/data/posts/${draft}`, as.bob!)).status).toBe(404);
    expect((await A.get('/api/data/posts?count=true', as.bob!)).body.data.count).toBe(1);
    expect((await A.get('/api/data/posts', p.sk)).body.data.total).toBe(2);
  });

  it('through the API: nobody writes another author\'s post, or posts as someone else', async () => {
    const edit = await A.patch(`/api/data/posts/${published}`, as.bob!, { title: 'hacked' });
    expect(edit.status).toBe(403);
    expect(edit.body.code ?? edit.body.message).toBeTruthy();
    expect((await A.patch(`/api/data/posts/${draft}`, as.bob!, { title: 'hacked' })).status).toBe(404);
    expect((await A.del(`/api/data/posts/${published}`, as.bob!)).status).toBe(403);
    expect((await A.post('/api/data/posts', as.bob!, { title: 'forged', published: true, author: alice })).status).toBe(403);
    expect((await A.post('/api/data/posts', p.pk, { title: 'anon', published: true, author: alice })).status).toBe(403);
    expect((await A.patch(`/api/data/posts/${published}`, as.alice!, { author: bob })).status).toBe(403);
    const mine = await A.patch(`/api/data/posts/${draft}`, as.alice!, { published: true });
    expect(mine.status).toBe(200);
    expect((await A.patch(`/api/data/posts/${draft}`, as.alice!, { published: false })).status).toBe(200);
    const row = await env.ctx.db.admin.selectFrom('documents').select('data').where('id', '=', published).executeTakeFirstOrThrow();
    expect(row.data).toMatchObject({ title: 'hello', author: alice });
  });

  it('aggregate, search and batch answer what the rule allows, as lists do', async () => {
    const count = await A.get('/api/data/posts/aggregate?count', as.bob!);
    expect(count.body.data.groups).toEqual([{ key: {}, count: 1 }]);
    expect(items(await A.get('/api/data/posts?search=draft', as.bob!))).toEqual([]);
    expect(items(await A.get('/api/data/posts?search=draft', as.alice!))).toEqual([draft]);
    const forged = await A.post('/api/data/batch', as.bob!, { operations: [{ op: 'update', collection: 'posts', id: published, data: { title: 'hacked' } }] });
    expect(forged.status).toBe(403);
    const mine = await A.post('/api/data/batch', as.bob!, { operations: [{ op: 'create', collection: 'posts', data: { title: 'bob', published: false, author: bob } }] });
    expect(mine.status, JSON.stringify(mine.body)).toBeLessThan(300);
    expect(items(await A.get('/api/data/posts', as.alice!))).toHaveLength(2);
    expect((await A.del(`/api/data/posts/${mine.body.data.results[0].id}?hard=true`, p.sk)).status).toBe(200);
  });

  it('a schema change that leaves a rule naming a missing field is refused; the policies follow the new schema', async () => {
    const patch = (schema: unknown[]) => env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/posts`, headers: p.owner.auth, payload: { schema } });
    const dropped = await patch([{ key: 'title', type: 'String', searchable: true }, { key: 'published', type: 'Boolean' }]);
    expect(dropped.statusCode).toBe(400);
    expect(dropped.json()).toMatchObject({ code: 'rule_invalid', position: 21 });
    expect(items(await A.get('/api/data/posts', as.bob!))).not.toContain(draft);
  });

  it('through raw SQL: the partition and the parent hide drafts; writes against the rule fail', async () => {
    expect(await rawIds(bob, 'posts')).toEqual([published]);
    expect(await rawIds(null, 'posts')).toEqual([published]);
    expect(await rawIds(alice, 'posts')).toEqual([published, draft].sort());
    const viaParent = await env.ctx.db.read(asPk(bob), (tx) => sql<{ id: string }>`SELECT id FROM documents WHERE collection_id = ${ids.posts}`.execute(tx));
    expect(viaParent.rows).toEqual([]);
    const n = await env.ctx.db.tenant(asPk(bob), async (tx) => {
      const u = await sql`UPDATE ${part('posts')} SET data = data || '{"title":"pwned"}' WHERE id = ${published}`.execute(tx);
      const d = await sql`DELETE FROM ${part('posts')} WHERE id = ${published}`.execute(tx);
      const up = await sql`UPDATE documents SET data = '{}' WHERE id = ${published}`.execute(tx);
      return [u, d, up].map((r) => Number(r.numAffectedRows));
    });
    expect(n).toEqual([0, 0, 0]);
    const insert = (table: ReturnType<typeof part> | ReturnType<typeof sql.table>, author: string) =>
      env.ctx.db.tenant(asPk(bob), (tx) =>
        sql`INSERT INTO ${table} (project_id, collection_id, id, owner_id, data) VALUES (${p.id}, ${ids.posts}, ${objectId()}, ${bob}, ${JSON.stringify({ author })}::jsonb)`.execute(tx),
      );
    await expect(insert(part('posts'), alice)).rejects.toThrow(/row-level security/);
    await expect(insert(sql.table('documents'), bob)).rejects.toThrow(/row-level security/);
    await expect(
      env.ctx.db.tenant(asPk(alice), (tx) => sql`UPDATE ${part('posts')} SET data = data || ${JSON.stringify({ author: bob })}::jsonb WHERE id = ${published}`.execute(tx)),
    ).rejects.toThrow(/row-level security/);
  });

  it('@data.author = @auth.id on update does not let a user take someone else\'s post', async () => {
    expect((await setRules(p, 'posts', { update: '@data.author = @auth.id' })).status).toBe(200);
    try {
      expect((await A.patch(`/api/data/posts/${published}`, as.bob!, { author: bob, title: 'mine now' })).status).toBe(403);
      const n = await env.ctx.db.tenant(asPk(bob), (tx) =>
        sql`UPDATE ${part('posts')} SET data = data || ${JSON.stringify({ author: bob })}::jsonb WHERE id = ${published}`.execute(tx),
      );
      expect(Number(n.numAffectedRows)).toBe(0);
      const row = await env.ctx.db.admin.selectFrom('documents').select('data').where('id', '=', published).executeTakeFirstOrThrow();
      expect(row.data).toMatchObject({ author: alice, title: 'hello' });
    } finally {
      expect((await setRules(p, 'posts', { update: 'author = @auth.id' })).status).toBe(200);
    }
  });
});

describe('team board: @collection.members(list = $outer.list && user = @auth.id)', () => {
  const board = objectId();
  let card: string;
  beforeAll(async () => {
    ids.members = (await createCollection(env, p, 'members', [{ key: 'list', type: 'String' }, { key: 'user', type: 'String' }]))._id;
    ids.cards = (await createCollection(env, p, 'cards', [{ key: 'list', type: 'String' }, { key: 'text', type: 'String' }]))._id;
    expect((await setRules(p, 'members', { list: 'user = @auth.id' })).status).toBe(200);
    const member = '@collection.members(list = $outer.list && user = @auth.id)';
    const set = await setRules(p, 'cards', { list: member, create: member, update: member, delete: member });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    for (const user of [alice, bob]) expect((await A.post('/api/data/members', p.sk, { list: board, user })).status).toBe(201);
    const made = await A.post('/api/data/cards', as.alice!, { list: board, text: 'todo' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    card = made.body._id;
  });

  it('through the API: members read and move each other\'s cards; others see nothing and write nothing', async () => {
    expect(items(await A.get('/api/data/cards', as.bob!))).toEqual([card]);
    const moved = await A.patch(`/api/data/cards/${card}`, as.bob!, { text: 'doing' });
    expect(moved.status).toBe(200);
    expect(moved.body.data.text).toBe('doing');
    expect(items(await A.get('/api/data/cards', as.carol!))).toEqual([]);
    expect((await A.get(`/api/data/cards/${card}`, as.carol!)).status).toBe(404);
    expect((await A.patch(`/api/data/cards/${card}`, as.carol!, { text: 'x' })).status).toBe(404);
    expect((await A.post('/api/data/cards', as.carol!, { list: board, text: 'spam' })).status).toBe(403);
    expect((await A.patch(`/api/data/cards/${card}`, as.bob!, { list: objectId() })).status).toBe(403);
  });

  it('through raw SQL: a non-member reads and writes nothing of the board', async () => {
    expect(await rawIds(carol, 'cards')).toEqual([]);
    expect(await rawIds(bob, 'cards')).toEqual([card]);
    const n = await env.ctx.db.tenant(asPk(carol), async (tx) => {
      const u = await sql`UPDATE ${part('cards')} SET data = '{"text":"pwned"}' WHERE id = ${card}`.execute(tx);
      const d = await sql`DELETE FROM ${part('cards')} WHERE id = ${card}`.execute(tx);
      return [Number(u.numAffectedRows), Number(d.numAffectedRows)];
    });
    expect(n).toEqual([0, 0]);
    await expect(
      env.ctx.db.tenant(asPk(carol), (tx) =>
        sql`INSERT INTO ${part('cards')} (project_id, collection_id, id, data) VALUES (${p.id}, ${ids.cards}, ${objectId()}, ${JSON.stringify({ list: board })}::jsonb)`.execute(tx),
      ),
    ).rejects.toThrow(/row-level security/);
  });

  it('a lookup names only collections of the project, and the SQL tests the project', async () => {
    const other = await makeProject(env.ctx);
    await createCollection(env, other, 'secrets', [{ key: 'user', type: 'String' }]);
    const refused = await setRules(p, 'cards', { list: '@collection.secrets(user = @auth.id)' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'rule_invalid', position: 1 });
    const got = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/collections/cards/rules`, headers: p.owner.auth });
    expect(got.json().data.sql.list).toContain(`FROM "documents_${ids.members}" "l1" WHERE "l1".project_id = plinth_project_id()`);
  });
});

describe('editor role: @auth.role', () => {
  let article: string;
  beforeAll(async () => {
    ids.articles = (await createCollection(env, p, 'articles', [{ key: 'title', type: 'String' }]))._id;
    const set = await setRules(p, 'articles', {
      list: 'true',
      create: '@auth.role in ["editor", "admin"]',
      update: '@auth.role in ["editor", "admin"]',
      delete: '@auth.role = "admin"',
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
  });

  it('through the API: readers read, editors write, only admins delete', async () => {
    expect((await A.post('/api/data/articles', as.alice!, { title: 'by a reader' })).status).toBe(403);
    const made = await A.post('/api/data/articles', as.bob!, { title: 'by an editor' });
    expect(made.status).toBe(201);
    article = made.body._id;
    expect(items(await A.get('/api/data/articles', as.alice!))).toEqual([article]);
    expect((await A.patch(`/api/data/articles/${article}`, as.alice!, { title: 'x' })).status).toBe(403);
    expect((await A.patch(`/api/data/articles/${article}`, as.bob!, { title: 'edited' })).status).toBe(200);
    expect((await A.del(`/api/data/articles/${article}`, as.bob!)).status).toBe(403);
    expect((await A.del(`/api/data/articles/${article}`, as.carol!)).status).toBe(200);
    expect((await A.post(`/api/data/articles/${article}/restore`, as.carol!, {})).status).toBe(200);
  });

  it('through raw SQL: a reader cannot insert, update or delete; a role change takes effect at once', async () => {
    await expect(
      env.ctx.db.tenant(asPk(dave), (tx) =>
        sql`INSERT INTO ${part('articles')} (project_id, collection_id, id, data) VALUES (${p.id}, ${ids.articles}, ${objectId()}, '{}')`.execute(tx),
      ),
    ).rejects.toThrow(/row-level security/);
    const touched = () =>
      env.ctx.db.tenant(asPk(dave), async (tx) => Number((await sql`UPDATE ${part('articles')} SET data = '{"title":"d"}' WHERE id = ${article}`.execute(tx)).numAffectedRows));
    expect(await touched()).toBe(0);
    await env.ctx.db.admin.updateTable('app_users').set({ data: JSON.stringify({ role: 'editor' }) } as never).where('id', '=', dave).execute();
    expect(await touched()).toBe(1);
  });
});

describe('list and view', () => {
  it('a list rule narrower than the view rule filters lists; get by id follows view', async () => {
    ids.pages = (await createCollection(env, p, 'pages', [{ key: 'title', type: 'String' }, { key: 'listed', type: 'Boolean' }]))._id;
    expect((await setRules(p, 'pages', { view: 'true', list: 'listed = true' })).status).toBe(200);
    const shown = (await A.post('/api/data/pages', p.sk, { title: 'a', listed: true })).body._id;
    const unlisted = (await A.post('/api/data/pages', p.sk, { title: 'b', listed: false })).body._id;
    expect(items(await A.get('/api/data/pages', as.alice!))).toEqual([shown]);
    expect((await A.get('/api/data/pages?count=true', as.alice!)).body.data.count).toBe(1);
    expect((await A.get(`/api/data/pages/${unlisted}`, as.alice!)).status).toBe(200);
  });
});

describe('saving rules', () => {
  it('points at the position of a refused rule, and leaves the policies as they were', async () => {
    const r = await setRules(p, 'posts', { list: 'published = true || pg_sleep(1) = 1' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'rule_invalid', action: 'list', position: 29 });
    const inj = await setRules(p, 'posts', { list: "title = 'x'); DROP TABLE documents; --" });
    expect(inj.status).toBe(400);
    expect(inj.body.position).toBe(13);
    expect(items(await A.get('/api/data/posts', as.bob!))).toHaveLength(1);
  });

  it('a hostile string literal is stored and compiled as data', async () => {
    const hostile = `x'); DROP TABLE documents; --`;
    expect((await setRules(p, 'articles', { list: `title != "${hostile}"` })).status).toBe(200);
    const got = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/collections/articles/rules`, headers: p.owner.auth });
    const data = got.json().data;
    expect(data.rules.list).toBe(`title != "${hostile}"`);
    expect(data.policies.find((x: { name: string }) => x.name === 'documents_read').using).toContain("'x''); DROP TABLE documents; --'");
    expect((await A.get('/api/data/articles', as.alice!)).status).toBe(200);
    expect(await env.ctx.db.admin.selectFrom('documents').select('id').limit(1).execute()).toHaveLength(1);
  });
});
