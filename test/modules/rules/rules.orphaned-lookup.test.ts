/**
 * A rule that looks up a collection which is then deleted (issue 46): `cards` reads and writes
 * through `@collection.members(...)`, and `members` goes. The running server refused what the
 * rule granted, but the next start failed for every project: the start-up policy sync compiled
 * the orphaned rule's SQL again, which names the dropped partition (`relation "documents_<id>"
 * does not exist`). Now a start marks such a rule broken (fail closed, with the reason), the
 * other projects come up, `GET …/rules` shows it, and saving a fixed rule restores it. Deleting a
 * looked-up collection is refused (409 collection_referenced_by_rules) unless forced, which marks
 * the rules at once; a schema change of a looked-up collection that a rule's lookup no longer
 * compiles against is refused the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDatabase } from '../../../src/boot.js';
import { announceChange } from '../../../src/modules/collections/cache.js';
import { dropOrphanPartitions } from '../../../src/modules/collections/partition-queries.js';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from '../data/helpers.js';

let env: TestEnv;
let A: ReturnType<typeof api>;

beforeAll(async () => {
  env = await createTestEnv();
  A = api(env);
});
afterAll(() => env.close());

const MEMBERS_FIELDS = [{ key: 'list', type: 'String' }, { key: 'user', type: 'String' }];
const CARDS_FIELDS = [{ key: 'list', type: 'String' }, { key: 'text', type: 'String' }];
const LOOKUP = '@collection.members(list = $outer.list && user = @auth.id)';
const CARDS_RULES = { list: LOOKUP, create: LOOKUP, update: LOOKUP, delete: LOOKUP };

interface Board {
  p: TestProject;
  as: Record<string, string>;
  alice: string;
  membersId: string;
  cardsId: string;
}

/** A project with the board example (docs/rules.md, example 2): alice is a member of list L1 and has one card there. */
async function board(): Promise<Board> {
  const p = await makeProject(env.ctx);
  const alice = objectId();
  const as = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  const members = await createCollection(env, p, 'members', MEMBERS_FIELDS);
  const cards = await createCollection(env, p, 'cards', CARDS_FIELDS);
  expect((await setRules(p, 'members', { list: 'user = @auth.id' })).statusCode).toBe(200);
  const saved = await setRules(p, 'cards', CARDS_RULES);
  expect(saved.statusCode, saved.body).toBe(200);
  expect((await A.post('/api/data/members', p.sk, { list: 'L1', user: alice })).status).toBe(201);
  const card = await A.post('/api/data/cards', as, { list: 'L1', text: 'first' });
  expect(card.status, JSON.stringify(card.body)).toBe(201);
  return { p, as, alice, membersId: members._id, cardsId: cards._id };
}

const setRules = (p: TestProject, name: string, r: Record<string, string | null>) =>
  env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/${name}/rules`, headers: p.owner.auth, payload: r });
const getRules = (p: TestProject, name: string) =>
  env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/collections/${name}/rules`, headers: p.owner.auth });
const deleteCollection = (p: TestProject, name: string, query = '') =>
  env.app.inject({ method: 'DELETE', url: `/api/projects/${p.id}/collections/${name}${query}`, headers: p.owner.auth });

/** What the card's member reads and may write now. */
async function access(b: Board) {
  const list = await A.get('/api/data/cards', b.as);
  const create = await A.post('/api/data/cards', b.as, { list: 'L1', text: 'another' });
  return { listed: list.status === 200 ? list.body.data.items.length : list.status, create: create.status };
}

/** A restart's database step (migrations, sql/, the policy sync), as `npm start` runs it; warnings captured. */
async function restart(): Promise<Array<{ detail: Record<string, unknown>; message: string }>> {
  const warnings: Array<{ detail: Record<string, unknown>; message: string }> = [];
  await prepareDatabase(env.databaseUrl, () => {}, (detail, message) => warnings.push({ detail, message }));
  return warnings;
}

describe('a restart after a looked-up collection was deleted (by a version without the check)', () => {
  it('starts, marks the rule broken and fail-closed with the reason, keeps other projects working, and a saved fixed rule restores it', async () => {
    const b = await board();
    const other = await board();
    expect(await access(b)).toEqual({ listed: 1, create: 201 });

    // What the previous version did on DELETE: the row goes, then the partition is dropped CASCADE,
    // taking the cards policies that named it.
    await env.ctx.db.admin.deleteFrom('collections').where('id', '=', b.membersId).execute();
    await dropOrphanPartitions(env.ctx.db.pool);
    await announceChange(env.ctx, b.p.id);

    const warnings = await restart();

    const mine = warnings.filter((w) => w.detail.collectionId === b.cardsId);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.detail).toMatchObject({ projectId: b.p.id, collection: 'cards' });
    expect(JSON.stringify(warnings)).not.toContain(b.p.secretKey);
    expect(JSON.stringify(warnings)).not.toContain('EXISTS');

    // Fail closed: the member neither reads nor writes cards; the other project is untouched.
    expect(await access(b)).toEqual({ listed: 0, create: 403 });
    expect(await access(other)).toEqual({ listed: 1, create: 201 });

    const shown = await getRules(b.p, 'cards');
    expect(shown.statusCode, shown.body).toBe(200);
    const data = shown.json().data;
    expect(data.rules).toMatchObject(CARDS_RULES);
    expect(data.broken.map((x: { action: string }) => x.action).sort()).toEqual(['create', 'delete', 'list', 'update']);
    expect(data.broken[0].reason).toMatch(/members/);
    expect(Object.values(data.sql)).toEqual(['false', 'false', 'false', 'false']);

    // A second start has nothing left to repair.
    expect((await restart()).filter((w) => w.detail.collectionId === b.cardsId)).toEqual([]);

    // Saving the rule as it is still names a collection the project lacks: refused with the reason.
    const refused = await setRules(b.p, 'cards', CARDS_RULES);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/Unknown collection 'members'/);

    // Bring members back and save the rule: the mark goes and the access returns.
    await createCollection(env, b.p, 'members', MEMBERS_FIELDS);
    expect((await setRules(b.p, 'members', { list: 'user = @auth.id' })).statusCode).toBe(200);
    expect((await A.post('/api/data/members', b.p.sk, { list: 'L1', user: b.alice })).status).toBe(201);
    const fixed = await setRules(b.p, 'cards', CARDS_RULES);
    expect(fixed.statusCode, fixed.body).toBe(200);
    expect(fixed.json().data.broken).toEqual([]);
    expect(await access(b)).toEqual({ listed: 2, create: 201 });
  });
});

describe('deleting a collection that rules look up', () => {
  it('is refused with 409 collection_referenced_by_rules naming the rules, and nothing changes', async () => {
    const b = await board();
    const res = await deleteCollection(b.p, 'members');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'collection_referenced_by_rules', rules: [{ collection: 'cards', actions: ['list', 'create', 'update', 'delete'] }] });
    expect(res.json().message).toMatch(/'cards'/);
    expect(await access(b)).toEqual({ listed: 1, create: 201 });
    expect((await getRules(b.p, 'cards')).json().data.broken).toEqual([]);
  });

  it('with ?force=true proceeds and marks those rules broken at once (fail closed); the next start has nothing to repair; other writes to the collection still work', async () => {
    const b = await board();
    const res = await deleteCollection(b.p, 'members', '?force=true');
    expect(res.statusCode, res.body).toBe(200);
    expect(await access(b)).toEqual({ listed: 0, create: 403 });
    const shown = (await getRules(b.p, 'cards')).json().data;
    expect(shown.broken).toEqual(
      ['list', 'create', 'update', 'delete'].map((action) => ({ action, reason: expect.stringMatching(/collection 'members', which was deleted/) })),
    );
    expect(shown.policies.length).toBeGreaterThan(0);
    // Every publishable policy denies, and none names the dropped partition.
    for (const pol of shown.policies.filter((x: { roles: string[] }) => x.roles.includes('plinth_api_publishable'))) {
      expect(`${pol.using ?? ''} ${pol.withCheck ?? ''}`).not.toMatch(/documents_|true/);
    }
    // The collection's other settings still change (its trigger rebuilds its policies from `false`).
    const rls = await env.app.inject({ method: 'PATCH', url: `/api/projects/${b.p.id}/collections/cards/rls`, headers: b.p.owner.auth, payload: { enabled: true, mode: 'public-read' } });
    expect(rls.statusCode, rls.body).toBe(200);
    // A schema change of cards keeps the marks (only a save of the rules clears them).
    const schema = await env.app.inject({ method: 'PATCH', url: `/api/projects/${b.p.id}/collections/cards`, headers: b.p.owner.auth, payload: { schema: [...CARDS_FIELDS, { key: 'due', type: 'Date' }] } });
    expect(schema.statusCode, schema.body).toBe(200);
    expect((await getRules(b.p, 'cards')).json().data.broken).toHaveLength(4);
    expect((await restart()).filter((w) => w.detail.projectId === b.p.id)).toEqual([]);
    expect(await access(b)).toEqual({ listed: 0, create: 403 });
    // A fixed rule (no lookup) saved: the marks go and its access applies.
    const fixed = await setRules(b.p, 'cards', { list: 'true', create: '@auth.id != null', update: null, delete: null });
    expect(fixed.statusCode, fixed.body).toBe(200);
    expect(fixed.json().data.broken).toEqual([]);
    expect(await access(b)).toEqual({ listed: 1, create: 201 });
  });

  it('a collection no other rule looks up deletes as before (cards, then members once nothing names it)', async () => {
    const b = await board();
    expect((await deleteCollection(b.p, 'cards')).statusCode).toBe(200);
    expect((await deleteCollection(b.p, 'members')).statusCode).toBe(200);
  });
});

describe('a schema change of a looked-up collection', () => {
  it('that removes a field a lookup compares is refused with 409, naming the rule; a compatible change recompiles the lookup', async () => {
    const b = await board();
    const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${b.p.id}/collections/members`, headers: b.p.owner.auth, payload: { schema: [{ key: 'user', type: 'String' }] } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'collection_referenced_by_rules', rules: [{ collection: 'cards' }] });
    expect(res.json().message).toMatch(/Unknown field 'list'/);
    expect(await access(b)).toEqual({ listed: 1, create: 201 });
    const ok = await env.app.inject({ method: 'PATCH', url: `/api/projects/${b.p.id}/collections/members`, headers: b.p.owner.auth, payload: { schema: [...MEMBERS_FIELDS, { key: 'role', type: 'String' }] } });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await access(b)).toEqual({ listed: 2, create: 201 });
  });
});
