/**
 * A project's access rules (docs/rules.md) survive export and import. Found by the team-board
 * example (examples/board): its lists are shared through a `members` lookup rule, and a copy
 * made without the rules let every signed-in user of the copy read and write every card. The
 * copy must keep the rules as written and compile them against its own collections, so a
 * member still reads the shared card and a stranger still reads none.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { PASSWORD, signup } from '../auth/helpers.js';
import { api, createCollection } from '../data/helpers.js';
import { exportOf, importInto, must } from './helpers.js';

let env: TestEnv;
let A: ReturnType<typeof api>;
let src: TestProject;
const MEMBER = '@collection.members(list = $outer.list && user = @auth.id)';

async function login(p: TestProject, email: string) {
  const body = await must(env, 'POST', '/api/userAuth/login', { ...p.pk, 'x-refresh-token-mode': 'header' }, { email, password: PASSWORD });
  return { ...p.pk, authorization: `Bearer ${body.data.accessToken as string}` };
}

const cardTexts = async (p: TestProject, as: Record<string, string>) =>
  ((await A.get('/api/data/cards', as)).body.data.items as Array<{ text: string }>).map((c) => c.text);

const people: Record<'alice' | 'bob' | 'carol', { id: string; email: string }> = {} as never;

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  A = api(env);
  src = await makeProject(env.ctx);
  await createCollection(env, src, 'users', [{ key: 'email', type: 'String', required: true, unique: true }, { key: 'password', type: 'String', required: true }]);
  await createCollection(env, src, 'members', [{ key: 'list', type: 'String' }, { key: 'user', type: 'String' }]);
  await createCollection(env, src, 'cards', [{ key: 'list', type: 'String' }, { key: 'text', type: 'String' }]);
  await must(env, 'PATCH', `/api/projects/${src.id}/collections/members/rules`, src.owner.auth, { list: 'user = @auth.id' });
  await must(env, 'PATCH', `/api/projects/${src.id}/collections/cards/rules`, src.owner.auth, { list: MEMBER, create: MEMBER, update: MEMBER, delete: MEMBER });
  for (const name of ['alice', 'bob', 'carol'] as const) {
    const s = await signup(env, src);
    people[name] = { id: s.body.data.user._id, email: s.body.data.user.email };
  }
  const list = 'aaaaaaaaaaaaaaaaaaaaaaaa';
  for (const who of [people.alice, people.bob]) expect((await A.post('/api/data/members', src.sk, { list, user: who.id })).status).toBe(201);
  expect((await A.post('/api/data/cards', await login(src, people.alice.email), { list, text: 'shared card' })).status).toBe(201);
  expect(await cardTexts(src, await login(src, people.carol.email))).toEqual([]);
});
afterAll(() => env.close());

describe('access rules in a project archive', () => {
  it('the export carries each collection\'s rules as written', async () => {
    const records = gunzipSync(await exportOf(env, src)).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
    const cards = records.find((r) => r.type === 'collection' && r.name === 'cards');
    expect(cards.rules).toEqual({ list: MEMBER, view: null, create: MEMBER, update: MEMBER, delete: MEMBER });
    expect(records.find((r) => r.type === 'collection' && r.name === 'members').rules).toMatchObject({ list: 'user = @auth.id' });
  });

  it('a copy keeps them: a stranger of the copy reads and writes no card, a member reads hers', async () => {
    const copy = await makeProject(env.ctx, src.owner, 'Board copy');
    const res = await importInto(env, copy, await exportOf(env, src), '?newIds=true');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const rules = await must(env, 'GET', `/api/projects/${copy.id}/collections/cards/rules`, copy.owner.auth);
    expect(rules.data.rules.list).toBe(MEMBER);
    expect(rules.data.sql.list).toContain('EXISTS (SELECT 1 FROM "documents_');
    const carol = await login(copy, people.carol.email);
    expect(await cardTexts(copy, carol)).toEqual([]);
    expect((await A.post('/api/data/cards', carol, { list: 'aaaaaaaaaaaaaaaaaaaaaaaa', text: 'spam' })).status).toBe(403);
    expect(await cardTexts(copy, await login(copy, people.bob.email))).toEqual(['shared card']);
  });

  it('a rule that names a collection the archive lacks is refused whole, naming its line', async () => {
    const records = gunzipSync(await exportOf(env, src)).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
    const edited = records
      .filter((r) => !(r.type === 'collection' && r.name === 'members') && !(r.type === 'document' && r.collection === 'members'))
      .map((r) => (r.type === 'end' ? { ...r, counts: { ...r.counts, collections: r.counts.collections - 1, documents: r.counts.documents - 2 } } : r));
    const copy = await makeProject(env.ctx, src.owner, 'Broken copy');
    const res = await importInto(env, copy, gzipSync(edited.map((r) => JSON.stringify(r)).join('\n') + '\n'), '?newIds=true');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_archive');
    expect(res.body.message).toMatch(/collection cards.*Unknown collection/);
    expect((await must(env, 'GET', `/api/projects/${copy.id}/collections`, copy.owner.auth)).data).toEqual([]);
  });
});
