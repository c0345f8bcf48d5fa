/**
 * A populated reference obeys the target's read rule for the caller: a collection without rules
 * of its own still puts the caller's user id in the scope when the read populates, so a rule on
 * `@auth.id` in the target neither hides the caller's own document nor shows another's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
const [alice, bob] = [objectId(), objectId()];
const as: Record<string, Record<string, string>> = {};

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  as.alice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  as.bob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, bob)}` };
  await createCollection(env, p, 'drafts', [{ key: 'author', type: 'String' }, { key: 'title', type: 'String' }]);
  const own = 'author = @auth.id';
  const set = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/drafts/rules`, headers: p.owner.auth,
    payload: { list: own, create: own, update: own, delete: own } });
  expect(set.statusCode, set.body).toBe(200);
  await createCollection(env, p, 'links', [{ key: 'owner', type: 'String' }, { key: 'target', type: 'Ref', ref: 'drafts' }],
    { enabled: true, mode: 'public-read', ownerField: 'owner' });
});
afterAll(() => env.close());

it('a reference into a rule-guarded collection is populated for who the rule admits, and only for them', async () => {
  const draft = await A.post('/api/data/drafts', as.alice!, { author: alice, title: 'mon brouillon — ébauche' });
  expect(draft.status, JSON.stringify(draft.body)).toBe(201);
  const draftId = draft.body.data?._id ?? draft.body._id;
  const link = await A.post('/api/data/links', as.alice!, { target: draftId });
  expect(link.status).toBe(201);
  const linkId = link.body.data?._id ?? link.body._id;
  const mine = await A.get(`/api/data/links/${linkId}?populate=target`, as.alice!);
  expect(mine.body.data.target).toMatchObject({ _id: draftId, title: 'mon brouillon — ébauche' });
  const listed = await A.get('/api/data/links?populate=target', as.alice!);
  expect(listed.body.data.items[0].target).toMatchObject({ _id: draftId });
  expect((await A.get(`/api/data/links/${linkId}?populate=target`, as.bob!)).body.data.target).toBeNull();
  expect((await A.get(`/api/data/links/${linkId}?populate=target`, p.pk)).body.data.target).toBeNull();
});
