/**
 * "Test this rule as user X": the preview answers what the real policies answer for that user,
 * for a saved or an unsaved rule, and leaves nothing behind (the candidate rule, a created or
 * changed document are rolled back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
const [alice, bob] = [objectId(), objectId()];
let published: string;
let draft: string;

const preview = async (body: Record<string, unknown>, project: TestProject = p) => {
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/collections/posts/rules/preview`, headers: project.owner.auth, payload: body });
  return { status: res.statusCode, body: res.json() };
};
const rulesNow = async () => (await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/collections/posts/rules`, headers: p.owner.auth })).json().data;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  for (const [name, id] of Object.entries({ alice, bob })) {
    await env.ctx.db.admin.insertInto('app_users').values({ id, project_id: p.id, email: `${name}@x.test`, password_hash: 'x', data: '{}' } as never).execute();
  }
  await createCollection(env, p, 'posts', [{ key: 'title', type: 'String' }, { key: 'published', type: 'Boolean' }, { key: 'author', type: 'String' }]);
  const own = 'author = @auth.id';
  const set = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/posts/rules`, headers: p.owner.auth, payload: { list: 'published = true || author = @auth.id', create: own, update: own, delete: own } });
  expect(set.statusCode).toBe(200);
  const asAlice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  published = (await A.post('/api/data/posts', asAlice, { title: 'hello', published: true, author: alice })).body._id;
  draft = (await A.post('/api/data/posts', asAlice, { title: 'draft', published: false, author: alice })).body._id;
});
afterAll(() => env.close());

describe('rules preview', () => {
  it('list under the saved rule: each user sees what the API shows them', async () => {
    expect((await preview({ action: 'list', userId: alice })).body.data).toMatchObject({ allowed: true, count: 2, ids: [draft, published] });
    expect((await preview({ action: 'list', userId: bob })).body.data).toMatchObject({ allowed: true, count: 1, ids: [published] });
    expect((await preview({ action: 'list' })).body.data).toMatchObject({ userId: null, count: 1, ids: [published] });
  });

  it('an unsaved rule is tried, not saved', async () => {
    const r = await preview({ action: 'list', userId: bob, rule: 'published = false' });
    expect(r.body.data).toMatchObject({ rule: 'published = false', count: 1, ids: [draft] });
    expect(r.body.data.sql).toContain("plinth_txt(\"data\", 'published') = 'false'");
    expect((await rulesNow()).rules.list).toBe('published = true || author = @auth.id');
    expect((await A.get('/api/data/posts', p.pk)).body.data.items.map((d: { _id: string }) => d._id)).toEqual([published]);
  });

  it('view, update and delete of one document: hidden, denied or allowed, as the policies decide; nothing is written', async () => {
    expect((await preview({ action: 'view', userId: bob, documentId: draft })).body.data).toMatchObject({ allowed: false, reason: 'hidden' });
    expect((await preview({ action: 'view', userId: alice, documentId: draft })).body.data).toMatchObject({ allowed: true, reason: null });
    expect((await preview({ action: 'update', userId: bob, documentId: published, data: { title: 'x' } })).body.data).toMatchObject({ allowed: false, reason: 'denied' });
    expect((await preview({ action: 'update', userId: alice, documentId: published, data: { author: bob } })).body.data).toMatchObject({ allowed: false, reason: 'denied' });
    expect((await preview({ action: 'update', userId: alice, documentId: published, data: { title: 'x' } })).body.data).toMatchObject({ allowed: true });
    expect((await preview({ action: 'delete', userId: alice, documentId: published })).body.data).toMatchObject({ allowed: true });
    expect((await preview({ action: 'delete', userId: bob, documentId: published, rule: 'true' })).body.data).toMatchObject({ allowed: true });
    const row = await env.ctx.db.admin.selectFrom('documents').select(['data', 'deleted_at']).where('id', '=', published).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ data: { title: 'hello', author: alice }, deleted_at: null });
  });

  it('create: the rule checks the new document; nothing is created', async () => {
    expect((await preview({ action: 'create', userId: bob, data: { title: 't', author: alice } })).body.data).toMatchObject({ allowed: false, reason: 'denied' });
    expect((await preview({ action: 'create', userId: bob, data: { title: 't', author: bob } })).body.data).toMatchObject({ allowed: true });
    expect((await preview({ action: 'create', data: { title: 't', author: bob } })).body.data).toMatchObject({ allowed: false });
    const n = await env.ctx.db.admin.selectFrom('documents').select('id').where('project_id', '=', p.id).execute();
    expect(n).toHaveLength(2);
  });

  it('a refused rule points at its position; an unknown user or document is 404; another project\'s user is unknown', async () => {
    expect((await preview({ action: 'list', rule: 'published = true || pg_sleep(1) = 1' })).body).toMatchObject({ code: 'rule_invalid', action: 'list', position: 29 });
    expect((await preview({ action: 'list', userId: objectId() })).status).toBe(404);
    expect((await preview({ action: 'view', userId: alice, documentId: objectId() })).status).toBe(404);
    expect((await preview({ action: 'update', userId: alice, documentId: published })).body.code).toBe('rule_preview_invalid');
    const other = await makeProject(env.ctx);
    await createCollection(env, other, 'posts', [{ key: 'title', type: 'String' }]);
    expect((await preview({ action: 'list', userId: alice }, other)).status).toBe(404);
    expect((await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections/posts/rules/preview`, headers: other.owner.auth, payload: { action: 'list' } })).statusCode).toBe(404);
  });

  it('data PostgreSQL refuses (a duplicate unique value) is the write path\'s 409, not an internal error', async () => {
    await createCollection(env, p, 'tags', [{ key: 'name', type: 'String', unique: true }]);
    await A.post('/api/data/tags', p.sk, { name: 'taken' });
    const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections/tags/rules/preview`, headers: p.owner.auth, payload: { action: 'create', userId: alice, rule: 'true', data: { name: 'taken' } } });
    expect({ status: res.statusCode, code: res.json().code }).toEqual({ status: 409, code: 'duplicate_value' });
  });
});
