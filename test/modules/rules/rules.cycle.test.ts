/**
 * Two collections whose rules look each other up (lists' read rule looks `members` up, members'
 * create rule looks `lists` up): found by the board example, where adding a member answered 500.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
const alice = objectId();
let as: Record<string, string>;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  as = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  await createCollection(env, p, 'users', [
    { key: 'email', type: 'String', required: true, unique: true },
    { key: 'password', type: 'String', required: true },
  ]);
  await env.ctx.db.admin.insertInto('app_users').values({ id: alice, project_id: p.id, email: 'alice@x.test', password_hash: 'x', data: '{}' } as never).execute();
  await createCollection(env, p, 'lists', [{ key: 'owner', type: 'String' }, { key: 'name', type: 'String' }]);
  await createCollection(env, p, 'members', [{ key: 'list', type: 'String' }, { key: 'email', type: 'String' }, { key: 'owner', type: 'String' }]);
});
afterAll(() => env.close());

const setRules = (name: string, r: Record<string, string | null>) =>
  env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/${name}/rules`, headers: p.owner.auth, payload: r });
const LISTS_READ = { list: 'owner = @auth.id || @collection.members(list = $outer.id && email = @auth.email)', create: 'owner = @auth.id', update: 'owner = @auth.id', delete: 'owner = @auth.id' };
const MEMBERS = { list: 'email = @auth.email || owner = @auth.id', create: 'owner = @auth.id && @collection.lists(id = $outer.list && owner = @auth.id)', update: 'owner = @auth.id', delete: 'owner = @auth.id' };

it('a loop of lookups is refused when saved, in either order, naming the loop (it would fail every write at run time)', async () => {
  const r0 = await setRules('lists', LISTS_READ);
  expect(r0.statusCode, r0.body).toBe(200);
  const second = await setRules('members', MEMBERS);
  expect(second.statusCode).toBe(400);
  expect(second.json()).toMatchObject({ code: 'rule_cycle' });
  expect(second.json().message).toMatch(/members → lists → members/);
  expect((await setRules('lists', { list: null, create: null, update: null, delete: null })).statusCode).toBe(200);
  expect((await setRules('members', MEMBERS)).statusCode).toBe(200);
  const first = await setRules('lists', LISTS_READ);
  expect(first.statusCode).toBe(400);
  expect(first.json()).toMatchObject({ code: 'rule_cycle' });
  expect((await setRules('lists', { list: 'owner = @auth.id || @collection.lists(id = $outer.id)' })).statusCode).toBe(400);
});

it('the same shape without the loop works: the owner of a list adds a member', async () => {
  expect((await setRules('lists', { list: 'owner = @auth.id', create: 'owner = @auth.id', update: 'owner = @auth.id', delete: 'owner = @auth.id' })).statusCode).toBe(200);
  const list = await A.post('/api/data/lists', as, { owner: alice, name: 'Courses — été' });
  expect(list.status, JSON.stringify(list.body)).toBe(201);
  const listId = list.body.data?._id ?? list.body._id;
  const member = await A.post('/api/data/members', as, { list: listId, email: 'bob@x.test', owner: alice });
  expect(member.status, JSON.stringify(member.body)).toBe(201);
});

it('a loop saved before loops were refused answers 400 rule_cycle, never a 500', async () => {
  const lists = await env.ctx.db.admin.selectFrom('collections').select(['id']).where('project_id', '=', p.id).where('name', '=', 'lists').executeTakeFirstOrThrow();
  const members = await env.ctx.db.admin.selectFrom('collections').select(['rules_sql']).where('project_id', '=', p.id).where('name', '=', 'members').executeTakeFirstOrThrow();
  const lookup = (members.rules_sql as { create: string }).create.match(/EXISTS \(SELECT 1 FROM "documents_[0-9a-f]{24}".*$/s)![0];
  expect(lookup).toContain(lists.id);
  // lists' read rule looks members up, written straight into the table as an old version would have let it
  const membersId = (await env.ctx.db.admin.selectFrom('collections').select('id').where('project_id', '=', p.id).where('name', '=', 'members').executeTakeFirstOrThrow()).id;
  const read = `owner_id = plinth_user_id() OR EXISTS (SELECT 1 FROM "documents_${membersId}" "l1" WHERE "l1".project_id = plinth_project_id())`;
  await env.ctx.db.admin.updateTable('collections').set({ rules_sql: JSON.stringify({ list: read, create: 'true' }) } as never).where('id', '=', lists.id).execute();
  const list = (await env.ctx.db.admin.selectFrom('documents').select('id').where('collection_id', '=', lists.id).executeTakeFirstOrThrow()).id;
  const member = await A.post('/api/data/members', as, { list, email: 'carol@x.test', owner: alice });
  expect(member.status, JSON.stringify(member.body)).toBe(400);
  expect(member.body.code).toBe('rule_cycle');
});
