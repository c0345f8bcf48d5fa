/**
 * Project export and import: a round trip gives back the same collections, schemas, documents
 * (ids, owners, times, soft deletes), end users (who sign in with their old password) and file
 * records; no secret leaves in the archive; a cut, foreign or conflicting archive writes nothing.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { PASSWORD, signup } from '../auth/helpers.js';
import { api, createCollection } from '../data/helpers.js';
import { upload } from '../storage/helpers.js';

let env: TestEnv;
let A: ReturnType<typeof api>;
let src: TestProject;
let archive: Buffer;
let users: Array<{ id: string; email: string }>;

const USERS = [
  { key: 'email', type: 'String', required: true, unique: true },
  { key: 'password', type: 'String', required: true },
  { key: 'username', type: 'String', unique: true },
];

async function exportOf(p: TestProject) {
  return env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/export`, headers: p.owner.auth });
}

async function importInto(p: TestProject, body: Buffer, query = '', contentType = 'application/gzip') {
  const res = await env.app.inject({
    method: 'POST', url: `/api/projects/${p.id}/import${query}`, headers: { ...p.owner.auth, 'content-type': contentType }, payload: body,
  });
  return { status: res.statusCode, body: res.json() };
}

const lines = (gz: Buffer) => gunzipSync(gz).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
const regzip = (records: unknown[]) => gzipSync(records.map((r) => JSON.stringify(r)).join('\n') + '\n');

/** What a project holds, as the API shows it, for comparing source and copy. */
async function snapshot(p: TestProject) {
  const cols = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth });
  const collections = (cols.json().data as Array<{ name: string; model: unknown; rls: unknown; indexes: unknown }>)
    .map((c) => ({ name: c.name, model: c.model, rls: c.rls, indexes: c.indexes }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const docs = (await A.get('/api/data/posts?limit=100&include_deleted=true&sort=_id', p.sk)).body.data;
  return { collections, docs };
}

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  A = api(env);
  src = await makeProject(env.ctx);
  await createCollection(env, src, 'users', USERS);
  await createCollection(env, src, 'posts', [
    { key: 'title', type: 'String', required: true },
    { key: 'slug', type: 'String', unique: true },
    { key: 'views', type: 'Number' },
    { key: 'tags', type: 'Array', items: { type: 'String' } },
    { key: 'userId', type: 'String' },
  ], { enabled: true, mode: 'private', ownerField: 'userId' });
  users = [];
  for (const name of ['annie', 'bobby']) {
    const s = await signup(env, src, { username: name });
    expect(s.res.statusCode, s.res.body).toBe(201);
    users.push({ id: s.body.data.user._id, email: s.body.data.user.email });
  }
  const many = Array.from({ length: 3 }, (_, k) => Array.from({ length: 100 }, (_, i) => ({ title: `t${k}-${i}`, slug: `s${k}-${i}`, views: i, tags: ['a', 'é', '日本'], userId: users[i % 2]!.id })));
  for (const batch of many) {
    const r = await A.post('/api/data/posts/bulk', src.sk, batch);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  const first = (await A.get('/api/data/posts?limit=1', src.sk)).body.data.items[0];
  expect((await A.del(`/api/data/posts/${first._id}`, src.sk)).status).toBe(200);
  const up = await upload(env, src.sk, 'hello world.txt', Buffer.from('hello'), 'text/plain');
  expect(up.res.statusCode).toBe(200);
  const res = await exportOf(src);
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('application/gzip');
  expect(res.headers['content-disposition']).toMatch(/attachment; filename="plinth-[0-9a-f]{24}-\d{4}-\d\d-\d\d\.ndjson\.gz"/);
  archive = res.rawPayload;
});
afterAll(() => env.close());

describe('the archive', () => {
  it('holds collections, documents, users and files in order, with counts at the end', () => {
    const recs = lines(archive);
    expect(recs[0]).toMatchObject({ type: 'header', format: 'plinth-project-archive', version: 3, project: { id: src.id } });
    const types = recs.map((r) => r.type);
    expect(types.filter((t) => t === 'collection')).toHaveLength(2);
    expect(types.filter((t) => t === 'document')).toHaveLength(300);
    expect(types.filter((t) => t === 'user')).toHaveLength(2);
    expect(types.filter((t) => t === 'file')).toHaveLength(1);
    expect(recs.at(-1)).toEqual({ type: 'end', counts: { collections: 2, documents: 300, users: 2, files: 1, totpFactors: 0, recoveryCodes: 0, passkeys: 0, identities: 0, authMailTemplates: 0, mailTemplates: 0, webhooks: 0, functions: 0, functionVersions: 0, functionSecrets: 0 } });
    expect(types.at(-2)).toBe('settings');
    expect(recs.find((r) => r.type === 'user').passwordHash).toMatch(/^\$argon2id\$/);
  });

  it('carries no secret: API keys, JWT secret, sessions', async () => {
    const text = gunzipSync(archive).toString('utf8');
    expect(text).not.toContain(src.secretKey);
    expect(text).not.toContain(src.publishableKey);
    const project = await env.ctx.db.admin.selectFrom('projects').select(['publishable_key_hash', 'secret_key_hash', 'jwt_secret']).where('id', '=', src.id).executeTakeFirstOrThrow();
    expect(text).not.toContain(project.secret_key_hash);
    expect(text).not.toContain(project.publishable_key_hash);
    expect(text).not.toContain(JSON.stringify(project.jwt_secret).slice(1, 30));
    const sessions = await env.ctx.db.admin.selectFrom('app_user_sessions').select('token_hash').where('project_id', '=', src.id).execute();
    expect(sessions.length).toBeGreaterThan(0);
    for (const s of sessions) expect(text).not.toContain(s.token_hash);
  });

  it('only the project owner may export or import', async () => {
    const stranger = await makeProject(env.ctx);
    expect((await env.app.inject({ method: 'GET', url: `/api/projects/${src.id}/export`, headers: stranger.owner.auth })).statusCode).toBe(404);
    expect((await importInto({ ...src, owner: stranger.owner }, archive)).status).toBe(404);
  });
});

describe('import', () => {
  it('dry run on this server while the source exists: user ids are taken, nothing written', async () => {
    const dst = await makeProject(env.ctx);
    const r = await importInto(dst, archive, '?dryRun=true');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ dryRun: true, counts: { collections: 2, documents: 300, users: 2, files: 1 } });
    expect(r.body.data.conflicts).toHaveLength(2);
    expect(r.body.data.conflicts[0]).toMatch(/id is taken on this server/);
    const real = await importInto(dst, archive);
    expect(real.status).toBe(409);
    expect(real.body.conflicts).toHaveLength(2);
    const empty = await env.app.inject({ method: 'GET', url: `/api/projects/${dst.id}/collections`, headers: dst.owner.auth });
    expect(empty.json().data).toEqual([]);
  });

  it('round trip: after the source is deleted, the copy equals it and its users sign in', async () => {
    const before = await snapshot(src);
    const del = await env.app.inject({ method: 'DELETE', url: `/api/projects/${src.id}`, headers: src.owner.auth });
    expect(del.statusCode).toBe(200);
    const dst = await makeProject(env.ctx, src.owner);
    const dry = await importInto(dst, archive, '?dryRun=true');
    expect(dry.body.data.conflicts).toEqual([]);
    const r = await importInto(dst, archive);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ dryRun: false, conflicts: [], counts: { collections: 2, documents: 300, users: 2, files: 1 } });
    expect(r.body.data.files).toEqual({ sourceFolder: `${src.id}/`, targetFolder: `${dst.id}/` });
    const after = await snapshot(dst);
    expect(after).toEqual(before);
    // Unique fields hold in the copy (documents and users).
    expect((await A.post('/api/data/posts', dst.sk, { title: 'x', slug: 's0-1' })).status).toBe(409);
    const login = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: dst.pk, payload: { email: users[0]!.email, password: PASSWORD } });
    expect(login.statusCode).toBe(200);
    expect(login.json().data.user._id).toBe(users[0]!.id);
    const taken = await signup(env, dst, { username: 'annie' });
    expect(taken.res.statusCode).toBe(409);
    // The file record lives under the new project's folder.
    const files = await env.ctx.db.admin.selectFrom('files').select(['path', 'size']).where('project_id', '=', dst.id).execute();
    expect(files).toEqual([{ path: expect.stringMatching(new RegExp(`^${dst.id}/[0-9a-f]{24}_hello_world\\.txt$`)), size: 5 }]);
    // The quota is charged for what was imported.
    const used = await env.ctx.db.admin.selectFrom('usage_counters').select(['metric', 'used']).where('subject_id', '=', dst.id).execute();
    expect(Number(used.find((u) => u.metric === 'db_bytes')?.used)).toBeGreaterThan(10_000);
    expect(Number(used.find((u) => u.metric === 'storage_bytes')?.used)).toBe(5);
    // A project that is no longer empty takes no second import.
    const again = await importInto(dst, archive);
    expect(again.status).toBe(409);
    expect(again.body.conflicts[0]).toMatch(/not empty/);
  });
});

describe('archives that are refused whole', () => {
  const recs = () => lines(archive);
  it.each([
    ['cut short (no end record)', () => regzip(recs().slice(0, -1)), 400, /no end record/],
    ['counts that do not match', () => regzip(recs().filter((r, i) => !(r.type === 'document' && i % 7 === 0))), 400, /end record counts/],
    ['not gzip', () => Buffer.from('{"type":"header"}\n'), 400, /gzip/],
    ['another format', () => regzip([{ type: 'header', format: 'mongo', version: 1 }]), 400, /not a Plinth project archive/],
    ['a newer version', () => regzip([{ ...recs()[0], version: 4 }]), 400, /version 4/],
    ['no header first', () => regzip(recs().slice(1)), 400, /start with its header/],
    ['a document before its collection', () => regzip([recs()[0], ...recs().filter((r) => r.type === 'document').slice(0, 1)]), 400, /does not declare/],
    ['a bad schema', () => regzip([recs()[0], { ...recs()[1], fields: [{ key: '$bad', type: 'String' }] }]), 400, /Line 2/],
    ['a duplicated document id', () => { const r = recs(); const d = r.find((x) => x.type === 'document'); return regzip([...r.slice(0, -1), d, { type: 'end', counts: r.at(-1).counts }]); }, 409, /unique/],
    ['deeply nested JSON', () => regzip([recs()[0], JSON.parse('{"type":"collection","name":"x","fields":[],"rls":{},"indexes":' + '['.repeat(40) + ']'.repeat(40) + '}')]), 400, /nested too deeply/],
  ] as Array<[string, () => Buffer, number, RegExp]>)('%s', async (_label, make, status, reason) => {
    const dst = await makeProject(env.ctx);
    const r = await importInto(dst, make());
    expect(r.status).toBe(status);
    expect(r.body.success).toBe(false);
    expect(JSON.stringify(r.body)).toMatch(reason);
    const left = await env.ctx.db.admin.selectFrom('collections').select('id').where('project_id', '=', dst.id).execute();
    expect(left).toEqual([]);
  });

  it('a body that is not gzip by content type is 415', async () => {
    const dst = await makeProject(env.ctx);
    const r = await env.app.inject({ method: 'POST', url: `/api/projects/${dst.id}/import`, headers: dst.owner.auth, payload: { any: 1 } });
    expect(r.statusCode).toBe(415);
  });
});
