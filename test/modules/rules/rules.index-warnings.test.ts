/**
 * A rule that cannot use an index says so when it is saved, with the plan PostgreSQL chose
 * (docs/rules.md, "Index warnings"); rules keep indexes usable where they can: they apply only
 * LEAKPROOF accessors to a document, so a client's filter still uses its index under the policy.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
const ids: Record<string, string> = {};

type Warning = { action: string; code: string; message: string; plan?: string };
async function setRules(name: string, rules: Record<string, string | null>) {
  const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/${name}/rules`, headers: p.owner.auth, payload: rules });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { warnings: Warning[]; sql: Record<string, string> };
}

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  ids.posts = (await createCollection(env, p, 'posts', [
    { key: 'title', type: 'String' },
    { key: 'published', type: 'Boolean' },
    { key: 'author', type: 'String' },
    { key: 'views', type: 'Number' },
    { key: 'note', type: 'String', index: false },
  ]))._id;
  ids.members = (await createCollection(env, p, 'members', [{ key: 'list', type: 'String' }, { key: 'user', type: 'String' }, { key: 'tag', type: 'String', index: false }]))._id;
  ids.cards = (await createCollection(env, p, 'cards', [{ key: 'list', type: 'String' }, { key: 'text', type: 'String' }]))._id;
});
afterAll(() => env.close());

describe('index warnings when a rule is saved', () => {
  it('an indexed rule saves without warnings', async () => {
    const r = await setRules('posts', { list: 'published = true || author = @auth.id', update: 'author = @auth.id' });
    expect(r.warnings).toEqual([]);
  });

  it('a rule that reads every document (a negation, a non-indexed field) is saved with a warning and its plan', async () => {
    for (const rule of ['!(views > 10)', 'note = "x"', 'published = true || note = "x"']) {
      const r = await setRules('posts', { list: rule });
      expect(r.warnings, rule).toHaveLength(1);
      expect(r.warnings[0]).toMatchObject({ action: 'list', code: 'rule_no_index' });
      expect(r.warnings[0]!.plan).toContain(`Seq Scan on documents_${ids.posts}`);
    }
    const get = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/collections/posts/rules`, headers: p.owner.auth });
    expect(get.json().data.warnings[0].code).toBe('rule_no_index');
    expect((await setRules('posts', { list: 'published = true || author = @auth.id' })).warnings).toEqual([]);
  });

  it('a rule that does not depend on the document (a role, the key kind) is no warning', async () => {
    expect((await setRules('posts', { list: '@auth.id != null' })).warnings).toEqual([]);
    expect((await setRules('posts', { list: 'published = true || author = @auth.id' })).warnings).toEqual([]);
  });

  it('a lookup on indexed fields is planned on their index; one on a field without an index is a warning', async () => {
    const good = await setRules('cards', { create: '@collection.members(list = @data.list && user = @auth.id)' });
    expect(good.warnings).toEqual([]);
    const bad = await setRules('cards', { create: '@collection.members(tag = @auth.id)' });
    expect(bad.warnings).toEqual([expect.objectContaining({ action: 'create', code: 'rule_no_index' })]);
    expect(bad.warnings[0]!.message).toContain("'members'");
    expect(bad.warnings[0]!.plan).toContain(`Seq Scan on documents_${ids.members}`);
  });

  it('a membership read rule warns that each list reads the collection, not that its lookup does', async () => {
    const r = await setRules('cards', { list: '@collection.members(list = $outer.list && user = @auth.id)', create: null });
    expect(r.warnings.map((w) => [w.action, w.code, w.plan?.includes(`Seq Scan on documents_${ids.cards}`), w.plan?.includes(`Seq Scan on documents_${ids.members}`)])).toEqual([
      ['list', 'rule_no_index', true, false],
    ]);
  });
});

describe('rules keep indexes usable', () => {
  it('a compiled rule applies only LEAKPROOF functions to the document', async () => {
    const r = await setRules('posts', { list: 'published = true || author = @auth.id', update: 'author = @auth.id && views > 1' });
    const applied = new Set<string>();
    for (const text of Object.values(r.sql)) for (const m of text.matchAll(/(\w+)\((?:"\w+"\.)?"data"/g)) applied.add(m[1]!);
    expect([...applied].sort()).toEqual(['plinth_key', 'plinth_num', 'plinth_txt']);
    const leaky = await sql<{ proname: string }>`SELECT proname FROM pg_proc WHERE proname = ANY(${[...applied]}::text[]) AND NOT proleakproof`.execute(env.ctx.db.admin);
    expect(leaky.rows).toEqual([]);
  });

  it("a client's filter on an indexed field is an index condition beneath the rule's policy", async () => {
    await setRules('posts', { list: 'published = true || author = @auth.id' });
    const plan = await env.ctx.db.tenant({ projectId: p.id, userId: objectId(), keyKind: 'publishable' }, async (tx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(tx);
      const res = await sql<{ 'QUERY PLAN': string }>`EXPLAIN SELECT id FROM ${sql.table(`documents_${ids.posts}`)}
        WHERE project_id = ${p.id} AND plinth_key(data, 'title') = 'hello' AND plinth_txt(data, 'title') = 'hello'`.execute(tx);
      return res.rows.map((x) => x['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Index Cond: \(plinth_key\(data, 'title'::text\) = 'hello'::text\)/);
    expect(plan).not.toContain('Seq Scan');
  });
});
