/**
 * The DBA's view (issue 50 item 5, docs/dashboard.md "Database"), against the real database.
 * Threats: a project's Database screen shows another tenant's partitions, policies or
 * statements; an API key (publishable or secret) or another operator reaches it; an operator
 * who is not the platform admin reads the migrations. And what it shows must be what
 * PostgreSQL holds: the policies exactly as pg_policies has them, the migrations' drift when a
 * recorded checksum no longer matches its file.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slowestStatements } from '../../../src/modules/database-insight/queries.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { createCollection } from '../data/helpers.js';

let env: TestEnv;
let admin: TestOperator;
let p: TestProject;
let other: TestProject;
const parts: Record<string, string> = {};
let otherParts: string[] = [];

const USERS = [
  { key: 'email', type: 'String', required: true, unique: true },
  { key: 'password', type: 'String', required: true },
  { key: 'username', type: 'String' },
];
const POSTS = [{ key: 'author', type: 'String', index: true }, { key: 'title', type: 'String' }];

async function setRules(project: TestProject, name: string, rules: Record<string, string | null>) {
  const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${project.id}/collections/${name}/rules`, headers: project.owner.auth, payload: rules });
  expect(res.statusCode, res.body).toBe(200);
}

const get = (url: string, headers: Record<string, string>) => env.app.inject({ method: 'GET', url, headers });
const dbRoute = (project: TestProject, what: string) => `/api/projects/${project.id}/database/${what}`;

beforeAll(async () => {
  env = await createTestEnv({ ADMIN_EMAIL: 'dba@example.com' });
  admin = await makeOperator(env.ctx, { email: 'dba@example.com' });
  p = await makeProject(env.ctx, undefined, 'Insight');
  other = await makeProject(env.ctx, undefined, 'Someone else');
  for (const [name, schema] of [['posts', POSTS], ['comments', POSTS], ['users', USERS]] as const) {
    parts[name] = `documents_${(await createCollection(env, p, name, [...schema]))._id}`;
  }
  await setRules(p, 'posts', { list: 'author = @auth.id', create: 'author = @auth.id' });
  await setRules(p, 'comments', { view: 'title != "hidden"', delete: 'author = @auth.id' });
  await setRules(p, 'users', { view: 'id = @auth.id' });
  for (const [name, schema] of [['ledger', POSTS], ['users', USERS]] as const) {
    otherParts.push(`documents_${(await createCollection(env, other, name, [...schema]))._id}`);
  }
  await setRules(other, 'ledger', { list: 'title = "other-tenant-literal"' });
  await setRules(other, 'users', { view: 'username = "other-tenant-user"' });
  otherParts = otherParts.sort();
}, 60_000);
afterAll(() => env.close());

describe('GET /api/projects/:projectId/database/policies', () => {
  it("lists the project's partitions' policies exactly as pg_policies holds them", async () => {
    const res = await get(dbRoute(p, 'policies'), p.owner.auth);
    expect(res.statusCode, res.body).toBe(200);
    const policies = res.json().data.policies as Array<Record<string, unknown>>;
    const expected = await sql<Record<string, unknown>>`
      SELECT schemaname::text, tablename::text, policyname::text, permissive, roles::text[] AS roles, cmd, qual, with_check
        FROM pg_policies WHERE tablename = ANY(${Object.values(parts)}::text[]) ORDER BY tablename, policyname`.execute(env.ctx.db.admin);
    expect(expected.rows.length).toBeGreaterThan(8);
    const onPartitions = policies
      .filter((x) => x.scope === 'partition')
      .map(({ collection: _c, scope: _s, ...rest }) => rest)
      .sort((a, b) => `${a.tablename}.${a.policyname}`.localeCompare(`${b.tablename}.${b.policyname}`));
    expect(onPartitions).toEqual(expected.rows);
    // The compiled rules are there, as PostgreSQL prints them.
    const insert = policies.find((x) => x.tablename === parts.posts && x.policyname === 'documents_insert');
    expect(insert).toMatchObject({ cmd: 'INSERT', roles: ['plinth_api_publishable'], permissive: 'PERMISSIVE', collection: 'posts', qual: null });
    expect(String(insert!.with_check)).toContain('plinth_user_id()');
    expect(policies.find((x) => x.tablename === parts.comments && x.policyname === 'documents_tenant')).toMatchObject({ permissive: 'RESTRICTIVE' });
  });

  it("includes the shared tenant tables' policies that apply to it, never another project's", async () => {
    const res = await get(dbRoute(p, 'policies'), p.owner.auth);
    const policies = res.json().data.policies as Array<{ tablename: string; policyname: string; scope: string }>;
    const shared = policies.filter((x) => x.scope === 'shared').map((x) => `${x.tablename}.${x.policyname}`);
    expect(shared).toEqual(expect.arrayContaining(['documents.documents_tenant', 'app_users.app_users_tenant', `app_users.app_users_read_${p.id}`, 'files.files_tenant']));
    const text = res.body;
    expect(text).not.toContain(other.id);
    for (const part of otherParts) expect(text).not.toContain(part);
    expect(text).not.toContain('other-tenant');
    // And the other project sees its own, not these.
    const theirs = await get(dbRoute(other, 'policies'), other.owner.auth);
    expect(theirs.body).toContain(`app_users_read_${other.id}`);
    expect(theirs.body).not.toContain(p.id);
    for (const part of Object.values(parts)) expect(theirs.body).not.toContain(part);
  });
});

describe('indexes and tables', () => {
  it("lists the partitions' indexes with size and use counts, only this project's", async () => {
    await env.app.inject({ method: 'POST', url: '/api/data/posts', headers: p.sk, payload: { author: 'a', title: 't' } });
    const res = await get(dbRoute(p, 'indexes'), p.owner.auth);
    expect(res.statusCode, res.body).toBe(200);
    const indexes = res.json().data.indexes as Array<Record<string, unknown>>;
    const expected = await sql<{ indexname: string; tablename: string }>`
      SELECT indexname::text, tablename::text FROM pg_indexes WHERE tablename = ANY(${Object.values(parts)}::text[])`.execute(env.ctx.db.admin);
    expect(indexes.map((i) => `${i.tablename}.${i.indexname}`).sort()).toEqual(expected.rows.map((i) => `${i.tablename}.${i.indexname}`).sort());
    for (const i of indexes) {
      expect(i).toMatchObject({ size_bytes: expect.any(Number), idx_scan: expect.any(Number), idx_tup_read: expect.any(Number), indexdef: expect.stringContaining(String(i.tablename)) });
      expect(i.size_bytes as number).toBeGreaterThan(0);
    }
    expect(new Set(indexes.map((i) => i.collection))).toEqual(new Set(['posts', 'comments', 'users']));
    for (const part of otherParts) expect(res.body).not.toContain(part);
  });

  it('lists table sizes, tuples, bloat estimate (dead tuple ratio) and vacuum times', async () => {
    await sql`VACUUM ANALYZE ${sql.table(parts.posts!)}`.execute(env.ctx.db.admin);
    const res = await get(dbRoute(p, 'tables'), p.owner.auth);
    expect(res.statusCode, res.body).toBe(200);
    const { bloatMethod, tables } = res.json().data as { bloatMethod: string; tables: Array<Record<string, number | string | null>> };
    expect(bloatMethod).toBe('dead_tuple_ratio');
    expect(tables.map((t) => t.tablename).sort()).toEqual(Object.values(parts).sort());
    for (const t of tables) {
      expect(t.total_bytes as number).toBeGreaterThanOrEqual((t.heap_bytes as number) + (t.indexes_bytes as number));
      expect(t.est_bloat_bytes).toBe(Math.round((t.heap_bytes as number) * (t.dead_ratio as number)));
    }
    const posts = tables.find((t) => t.collection === 'posts')!;
    await expect.poll(async () => (await get(dbRoute(p, 'tables'), p.owner.auth)).json().data.tables.find((t: { collection: string }) => t.collection === 'posts').last_vacuum, { timeout: 5000 }).not.toBeNull();
    expect(posts.heap_bytes as number).toBeGreaterThan(0);
  });
});

describe('slowest statements', () => {
  it('answers available: false when pg_stat_statements is not installed, or installed but not loaded', async () => {
    const res = await get(dbRoute(p, 'statements'), p.owner.auth);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ available: false, reason: expect.stringContaining('not installed'), statements: [] });
    const loaded = await sql<{ on: boolean }>`SELECT current_setting('shared_preload_libraries') ~ 'pg_stat_statements' AS on`.execute(env.ctx.db.admin);
    if (loaded.rows[0]!.on) return; // a server that loads it: the not-loaded case cannot be made here
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.execute(env.ctx.db.admin);
    try {
      const again = await get(dbRoute(p, 'statements'), p.owner.auth);
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json().data).toMatchObject({ available: false, reason: expect.stringContaining('shared_preload_libraries'), statements: [] });
    } finally {
      await sql`DROP EXTENSION pg_stat_statements`.execute(env.ctx.db.admin);
    }
  });

  it("shows only plain DML naming this project's partitions and no other's, of this database (a stand-in view)", async () => {
    const db = env.ctx.db.admin;
    const dbid = (await sql<{ oid: number }>`SELECT oid FROM pg_database WHERE datname = current_database()`.execute(db)).rows[0]!.oid;
    await sql`CREATE SCHEMA fake_pss`.execute(db);
    await sql`CREATE TABLE fake_pss.pg_stat_statements (dbid oid, queryid bigint, query text, calls bigint, total_exec_time float8, mean_exec_time float8,
      max_exec_time float8, rows bigint, shared_blks_hit bigint, shared_blks_read bigint)`.execute(db);
    const mine = parts.posts!;
    const theirs = otherParts[0]!;
    const rows: Array<[number, number, string, number]> = [
      [dbid, 1, `SELECT id, data FROM "${mine}" WHERE plinth_txt(data, $1) = $2 LIMIT $3`, 5],
      [dbid, 2, `  with x AS (SELECT 1 FROM ${mine}) UPDATE "${mine}" SET data = $1`, 9],
      [dbid, 3, `SELECT * FROM "${theirs}" WHERE id = $1`, 50],
      [dbid, 4, `SELECT * FROM "${mine}" JOIN "${theirs}" ON true`, 40],
      [dbid, 5, `CREATE POLICY documents_read ON "${mine}" USING (title = 'literal')`, 30],
      [dbid + 1, 6, `SELECT * FROM "${mine}"`, 20],
      [dbid, 7, 'SELECT * FROM app_users WHERE project_id = $1', 60],
      [dbid, 8, `SELECT * FROM "${mine}x"`, 70],
    ];
    for (const [d, id, q, mean] of rows) {
      await sql`INSERT INTO fake_pss.pg_stat_statements VALUES (${d}, ${id}, ${q}, 3, ${mean * 3}, ${mean}, ${mean * 2}, 10, 100, 1)`.execute(db);
    }
    const found = await slowestStatements(db, 'fake_pss', Object.values(parts), 10);
    expect(found.map((r) => r.queryid)).toEqual(['2', '1']);
    await sql`DROP SCHEMA fake_pss CASCADE`.execute(db);
  });
});

describe('who may read it', () => {
  it('a publishable or secret key cannot reach the routes; another operator gets 404', async () => {
    const stranger = await makeOperator(env.ctx);
    for (const what of ['policies', 'indexes', 'tables', 'statements']) {
      for (const key of [p.pk, p.sk]) {
        const res = await get(dbRoute(p, what), key);
        expect([what, res.statusCode]).toEqual([what, 401]);
      }
      expect((await get(dbRoute(p, what), {})).statusCode).toBe(401);
      const res = await get(dbRoute(p, what), stranger.auth);
      expect([what, res.statusCode, res.json().code]).toEqual([what, 404, 'project_not_found']);
    }
    expect((await get('/api/admin/database/migrations', p.sk)).statusCode).toBe(401);
  });

  it('an operator who is not the platform admin cannot see the migrations', async () => {
    const res = await get('/api/admin/database/migrations', p.owner.auth);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('admin_only');
  });

  it('no response carries a key, a password or the connection string', async () => {
    const bodies: string[] = [];
    for (const what of ['policies', 'indexes', 'tables', 'statements']) bodies.push((await get(dbRoute(p, what), p.owner.auth)).body);
    bodies.push((await get('/api/admin/database/migrations', admin.auth)).body);
    const url = new URL(env.databaseUrl);
    for (const b of bodies) {
      for (const secret of [p.secretKey, p.publishableKey, env.databaseUrl, `${url.host}${url.pathname}`]) expect(b).not.toContain(secret);
      expect(b).not.toMatch(/postgres(ql)?:\/\//);
    }
  });
});

describe('GET /api/admin/database/migrations', () => {
  it('the admin sees every migration applied with its checksum, in sync', async () => {
    const res = await get('/api/admin/database/migrations', admin.auth);
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ inSync: true, drift: false, counts: { changed: 0, missing: 0, unknown: 0, pending: 0 } });
    expect(data.migrations.length).toBeGreaterThan(40);
    const first = data.migrations[0];
    expect(first).toMatchObject({ name: '001_foundation', state: 'ok', recordedChecksum: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(first.fileChecksum).toBe(first.recordedChecksum);
    expect(data.migrations.map((m: { name: string }) => m.name)).toContain('069_migration_checksums');
  });

  it('reports drift: a tampered checksum (changed), a checksum never recorded (unknown), an applied migration without a file (missing)', async () => {
    const db = env.ctx.db.admin;
    await sql`UPDATE plinth_migration_checksums SET checksum = ${'0'.repeat(64)} WHERE name = '003_data'`.execute(db);
    await sql`DELETE FROM plinth_migration_checksums WHERE name = '010_collection_compound_indexes'`.execute(db);
    await sql`INSERT INTO pgmigrations (name, run_on) VALUES ('999_from_a_newer_version', now())`.execute(db);
    const res = await get('/api/admin/database/migrations', admin.auth);
    const data = res.json().data;
    expect(data).toMatchObject({ inSync: false, drift: true, counts: { changed: 1, missing: 1, unknown: 1 } });
    const by = new Map(data.migrations.map((m: { name: string }) => [m.name, m]));
    expect(by.get('003_data')).toMatchObject({ state: 'changed', recordedChecksum: '0'.repeat(64), fileChecksum: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(by.get('010_collection_compound_indexes')).toMatchObject({ state: 'unknown', recordedChecksum: null });
    expect(by.get('999_from_a_newer_version')).toMatchObject({ state: 'missing', fileChecksum: null });
  });
});
