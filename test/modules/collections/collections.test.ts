/** Dashboard collections: create/list/get/update schema/delete, RLS settings, limits. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
const base = () => `/api/projects/${p.id}/collections`;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
});
afterAll(() => env.close());

describe('create', () => {
  it('creates with a schema (also as collectionName) and lists/gets it', async () => {
    const r = await A.post(base(), p.owner.auth, { name: 'books', schema: [{ key: 'title', type: 'String', required: true }] });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ name: 'books', schemaVersion: 1, rls: { enabled: false, mode: 'public-read', ownerField: 'userId' } });
    expect((await A.post(base(), p.owner.auth, { collectionName: 'films', schema: [] })).status).toBe(201);
    const list = await A.get(base(), p.owner.auth);
    expect(list.body.data.map((c: { name: string }) => c.name)).toEqual(['books', 'films']);
    expect((await A.get(`${base()}/books`, p.owner.auth)).body.data.model[0].key).toBe('title');
    expect((await A.get(`${base()}/nope`, p.owner.auth)).status).toBe(404);
  });

  it('gives each collection its own partition, and the planner real statistics on its declared fields', async () => {
    const fields = [{ key: 'shelfCode', type: 'String' }, { key: 'notes', type: 'Object', fields: [{ key: 'text', type: 'String' }] }];
    const created = await A.post(base(), p.owner.auth, { name: 'shelves', schema: fields });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id: string = created.body.data._id;
    const part = `documents_${id}`;
    const parts = await sql<{ name: string }>`
      SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'documents'::regclass`.execute(env.ctx.db.admin);
    expect(parts.rows.map((r) => r.name)).toContain(part);
    // 150 'A' and 50 'B': without statistics the planner would guess 0.5 % (1 row) for either.
    // A String's index is on plinth_key (migrations/025), the expression a filter on it uses.
    await sql`INSERT INTO documents (project_id, collection_id, id, data)
      SELECT ${p.id}, ${id}, lpad(to_hex(g), 24, '0'), jsonb_build_object('shelfCode', CASE WHEN g <= 150 THEN 'A' ELSE 'B' END)
      FROM generate_series(1, 200) g`.execute(env.ctx.db.admin);
    await sql.raw(`ANALYZE ${part}`).execute(env.ctx.db.admin);
    const plan = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`
      EXPLAIN (FORMAT JSON) SELECT id FROM documents WHERE collection_id = ${sql.lit(id)} AND plinth_key(data, 'shelfCode') = 'A'`.execute(env.ctx.db.admin);
    expect(plan.rows[0]!['QUERY PLAN'][0]!.Plan['Plan Rows']).toBeGreaterThan(100);
  });

  it('rejects bad names, bad schemas (with the reason) and duplicates', async () => {
    expect((await A.post(base(), p.owner.auth, { name: 'bad name', schema: [] })).status).toBe(400);
    expect((await A.post(base(), p.owner.auth, { name: 'x'.repeat(65), schema: [] })).status).toBe(400);
    const cases: Array<[unknown[], RegExp]> = [
      [[{ key: '$x', type: 'String' }], /may not start with/],
      [[{ key: 'a.b', type: 'String' }], /may not start with/],
      [[{ key: 'a\u0000', type: 'String' }], /control characters/],
      [[{ key: 's', type: 'String', default: 'x\u0000' }], /may not contain NUL/],
      [[{ key: 'o', type: 'Object' }], /non-empty fields/],
      [[{ key: 'a', type: 'Array' }], /needs items/],
      [[{ key: 'r', type: 'Ref' }], /needs ref/],
      [[{ key: 'o', type: 'Object', fields: [{ key: 'u', type: 'String', unique: true }] }], /nesting depth/],
      [[{ key: 'n', type: 'Number', default: 'x' }], /Default value type/],
      [[{ key: 'n', type: 'String', required: true, default: 'x' }], /Default value type/],
      [[{ key: 'a', type: 'Object', fields: [{ key: 'b', type: 'Object', fields: [{ key: 'c', type: 'Object', fields: [{ key: 'd', type: 'String' }] }] }] }], /nesting depth/],
      [[{ key: 'x', type: 'Whatever' }], /invalid type/],
      // Strings jsonb cannot store, wherever they are in a definition.
      [[{ key: 's', type: 'String', ref: 'a\u0000' }], /NUL or unpaired surrogate/],
      [[{ key: 's', type: 'String', default: 'x\ud800' }], /NUL or unpaired surrogate/],
      [[{ key: '\udc00', type: 'String' }], /NUL or unpaired surrogate/],
      // Allowed values: String or Number only, 1-100 distinct values of the type, default among them.
      [[{ key: 'b', type: 'Boolean', enum: [true] }], /only String and Number fields can have allowed values/],
      [[{ key: 's', type: 'String', enum: [] }], /list of 1 to 100 values/],
      [[{ key: 's', type: 'String', enum: 'a' }], /list of 1 to 100 values/],
      [[{ key: 's', type: 'String', enum: Array.from({ length: 101 }, (_, i) => `v${i}`) }], /list of 1 to 100 values/],
      [[{ key: 's', type: 'String', enum: ['a', 1] }], /non-empty Strings/],
      [[{ key: 's', type: 'String', enum: [' a'] }], /without surrounding spaces/],
      [[{ key: 'n', type: 'Number', enum: [1, '2'] }], /finite Numbers/],
      [[{ key: 's', type: 'String', enum: ['a', 'a'] }], /distinct/],
      [[{ key: 's', type: 'String', enum: ['a', 'b'], default: 'c' }], /default must be one of/],
    ];
    for (const [schema, msg] of cases) {
      const r = await A.post(base(), p.owner.auth, { name: 'bad', schema });
      expect(r.status, JSON.stringify(schema)).toBe(400);
      expect(r.body.message).toMatch(msg);
    }
    expect((await A.post(base(), p.owner.auth, { name: 'BOOKS', schema: [] })).status).toBe(409);
  });

  it("the users collection needs required String email and password (422)", async () => {
    const r = await A.post(base(), p.owner.auth, { name: 'users', schema: [{ key: 'email', type: 'String', required: true }] });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe("The 'users' collection must have required 'email' and 'password' string fields.");
    const ok = await A.post(base(), p.owner.auth, {
      name: 'users',
      schema: [{ key: 'email', type: 'String', required: true, unique: true }, { key: 'password', type: 'String', required: true }],
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data.rls.ownerField).toBe('_id');
  });

  it('enforces the plan limit with 403', async () => {
    const q = await makeProject(env.ctx, await makeOperator(env.ctx));
    for (let i = 0; i < 20; i++) expect((await A.post(`/api/projects/${q.id}/collections`, q.owner.auth, { name: `c${i}` })).status).toBe(201);
    const r = await A.post(`/api/projects/${q.id}/collections`, q.owner.auth, { name: 'one-more' });
    expect(r.status).toBe(403);
    expect(r.body.message).toBe('Collection limit reached (20). Please upgrade your plan to create more collections.');
  });

  it("another operator's project is 404, a bad project id 400, no token 401", async () => {
    const other = await makeOperator(env.ctx);
    expect((await A.get(base(), other.auth)).status).toBe(404);
    expect((await A.get('/api/projects/xyz/collections', p.owner.auth)).status).toBe(400);
    expect((await A.get(base(), {})).status).toBe(401);
  });

  it('a name no collection can have (NUL) is 404 on every route, not a database error', async () => {
    const url = `${base()}/a%00b`;
    expect((await A.get(url, p.owner.auth)).status).toBe(404);
    expect((await A.patch(url, p.owner.auth, { schema: [] })).status).toBe(404);
    expect((await A.patch(`${url}/rls`, p.owner.auth, { enabled: true })).status).toBe(404);
    expect((await A.del(url, p.owner.auth)).status).toBe(404);
  });
});

describe('schema updates', () => {
  it('bumps the version; new writes follow the new schema; a unique field over duplicates is 409', async () => {
    await A.post(base(), p.owner.auth, { name: 'tags', schema: [{ key: 'label', type: 'String' }] });
    await A.post('/api/data/tags', p.sk, { label: 'same' });
    await A.post('/api/data/tags', p.sk, { label: 'same' });
    const up = await A.patch(`${base()}/tags`, p.owner.auth, { schema: [{ key: 'label', type: 'String' }, { key: 'n', type: 'Number', required: true }] });
    expect(up.body.data.schemaVersion).toBe(2);
    expect((await A.post('/api/data/tags', p.sk, { label: 'x' })).body.message).toBe("Field 'n' is required.");
    const uniq = await A.patch(`${base()}/tags`, p.owner.auth, { schema: [{ key: 'label', type: 'String', unique: true }] });
    expect(uniq.status).toBe(409);
    expect((await A.get(`${base()}/tags`, p.owner.auth)).body.data.schemaVersion).toBe(2);
  });
});

describe('allowed values (enum)', () => {
  it('a write outside a field\'s allowed values is refused on create, update and nested fields; the schema keeps the list', async () => {
    const schema = [
      { key: 'status', type: 'String', enum: ['draft', 'published'], default: 'draft' },
      { key: 'stars', type: 'Number', enum: [1, 2, 3] },
      { key: 'meta', type: 'Object', fields: [{ key: 'tone', type: 'String', enum: ['dry', 'warm'] }] },
      { key: 'tags', type: 'Array', items: { type: 'String' } },
    ];
    expect((await A.post(base(), p.owner.auth, { name: 'reviews', schema })).status).toBe(201);
    expect((await A.get(`${base()}/reviews`, p.owner.auth)).body.data.model[0]).toEqual({ key: 'status', type: 'String', enum: ['draft', 'published'], default: 'draft' });
    const bad = await A.post('/api/data/reviews', p.sk, { status: 'archived' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe("Field 'status' must be one of 'draft', 'published'.");
    expect((await A.post('/api/data/reviews', p.sk, { stars: 4 })).body.message).toBe("Field 'stars' must be one of 1, 2, 3.");
    expect((await A.post('/api/data/reviews', p.sk, { stars: '1' })).body.message).toBe("Field 'stars' must be a Number.");
    expect((await A.post('/api/data/reviews', p.sk, { meta: { tone: 'cold' } })).body.message).toBe("Field 'tone' must be one of 'dry', 'warm'.");
    // Trimmed, then compared; the default fills a missing value.
    const ok = await A.post('/api/data/reviews', p.sk, { status: ' published ', stars: 3 });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ status: 'published', stars: 3 });
    const dflt = await A.post('/api/data/reviews', p.sk, { stars: 1 });
    expect(dflt.body.status).toBe('draft');
    const patched = await A.patch(`/api/data/reviews/${ok.body._id}`, p.sk, { status: 'gone' });
    expect(patched.status).toBe(400);
    expect(patched.body.message).toBe("Field 'status' must be one of 'draft', 'published'.");
    const doc = await A.get(`/api/data/reviews/${ok.body._id}`, p.sk);
    expect(doc.body.data.status).toBe('published');
    // The public schema API keeps the list too.
    const pub = await A.post('/api/schemas', p.sk, { name: 'moods', fields: [{ name: 'mood', type: 'string', enum: ['up', 'down'] }] });
    expect(pub.status, JSON.stringify(pub.body)).toBe(201);
    expect((await A.post('/api/data/moods', p.sk, { mood: 'sideways' })).status).toBe(400);
  });
});

describe('rls settings', () => {
  it('updates with the SDK messages', async () => {
    await A.post(base(), p.owner.auth, { name: 'notes', schema: [{ key: 'ownerId', type: 'String' }] });
    const r = await A.patch(`${base()}/notes/rls`, p.owner.auth, { enabled: true, mode: 'private', ownerField: 'OWNERID' });
    expect(r.body).toMatchObject({ message: 'Collection RLS updated', data: { collection: { name: 'notes', rls: { enabled: true, mode: 'private', ownerField: 'ownerId' } } } });
    const badMode = await A.patch(`${base()}/notes/rls`, p.owner.auth, { mode: 'weird' });
    expect(badMode.body.message).toBe('Unsupported RLS mode. Allowed: public-read, private, owner-write-only (legacy).');
    const badField = await A.patch(`${base()}/notes/rls`, p.owner.auth, { ownerField: 'nope' });
    expect(badField.status).toBe(400);
    expect(badField.body.message).toBe("ownerField 'nope' not found in collection schema");
    expect((await A.patch(`${base()}/notes/rls`, p.owner.auth, { ownerField: '_id' })).status).toBe(400);
    expect((await A.patch(`${base()}/notes/rls`, p.owner.auth, { mode: 'owner-write-only' })).body.data.collection.rls.mode).toBe('public-read');
  });
});

describe('delete', () => {
  it('drops documents, indexes and frees the database bytes', async () => {
    const c = await A.post(base(), p.owner.auth, { name: 'gone', schema: [{ key: 'code', type: 'String', unique: true }] });
    await A.post('/api/data/gone', p.sk, { code: 'a' });
    const before = await env.ctx.db.admin.selectFrom('usage_counters').select('used').where('subject_id', '=', p.id).executeTakeFirstOrThrow();
    const r = await A.del(`${base()}/gone`, p.owner.auth);
    expect(r.body.message).toBe("Collection 'gone' deleted successfully.");
    const docs = await env.ctx.db.admin.selectFrom('documents').select('id').where('collection_id', '=', c.body.data._id).execute();
    expect(docs).toEqual([]);
    const idx = await sql`SELECT indexname FROM pg_indexes WHERE indexname LIKE ${'%' + c.body.data._id + '%'}`.execute(env.ctx.db.admin);
    expect(idx.rows).toEqual([]);
    const tables = await sql`SELECT relname FROM pg_class WHERE relname = ${'documents_' + c.body.data._id}`.execute(env.ctx.db.admin);
    expect(tables.rows).toEqual([]);
    const after = await env.ctx.db.admin.selectFrom('usage_counters').select('used').where('subject_id', '=', p.id).executeTakeFirstOrThrow();
    expect(after.used).toBeLessThan(before.used);
    expect((await A.get('/api/data/gone', p.sk)).status).toBe(404);
  });
});
