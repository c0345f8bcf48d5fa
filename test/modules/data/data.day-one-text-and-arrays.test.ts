/**
 * What an ordinary app hit on its first day (issue 32, items 1, 7 and 14):
 * - a blog declares `body` as a String and a 5 000-character post was refused (`value_too_long`:
 *   every declared String had a whole-value B-tree index, whose entries hold ~2 700 bytes);
 * - `?tags=café` answered no posts although six carry the tag (an Array compared as a whole);
 * - a Date filter refused the epoch milliseconds a Date field accepts in a body.
 * Long values are now stored, and filtering and sorting on them still work; equality on an Array
 * matches an element, with a GIN index where the field is declared `index: true`.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileAllIndexes } from '../../../src/modules/collections/index-queries.js';
import { compileFilters } from '../../../src/modules/realtime/match.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
let postsId: string;

/** Non-ASCII, emoji and random hex (incompressible, so PostgreSQL cannot squeeze it). */
const longText = (chars: number) => {
  let s = 'Ελληνικά, café, 東京 🚀 ';
  while (s.length < chars) s += randomBytes(64).toString('hex') + ' ünïcødé 🎉 ';
  return Array.from(s).slice(0, chars).join(''); // whole code points: never half an emoji
};

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  const posts = await createCollection(env, p, 'posts', [
    { key: 'title', type: 'String' },
    { key: 'body', type: 'String' },
    { key: 'tags', type: 'Array', items: { type: 'String' }, index: true },
    { key: 'scores', type: 'Array', items: { type: 'Number' } },
    { key: 'publishedAt', type: 'Date' },
  ]);
  postsId = posts._id;
});
afterAll(() => env.close());

const items = (r: { body: { data: { items: Array<Record<string, unknown>> } } }) => r.body.data.items;

describe('a blog post with a long body', () => {
  it('a 5 000-character body in a declared String field is stored (it was value_too_long)', async () => {
    const body = longText(5000);
    const r = await A.post('/api/data/posts', p.sk, { title: 'Five thousand', body });
    expect(r.status).toBe(201);
    const got = await A.get(`/api/data/posts/${r.body.data?._id ?? r.body._id}`, p.sk);
    expect(got.body.data.body).toBe(body.trim());
  });

  it('a 50 000-character body is stored, found by equality and by title, and sorts', async () => {
    const body = longText(50_000);
    const c = await A.post('/api/data/posts', p.sk, { title: 'Fifty thousand', body });
    expect(c.status).toBe(201);
    const byTitle = await A.get(`/api/data/posts?title=${encodeURIComponent('Fifty thousand')}`, p.sk);
    expect(items(byTitle).map((d) => d.body)).toEqual([body.trim()]);
    // Equality on the whole long value: the prefix finds the candidates, the whole value decides.
    const sibling = Array.from(body).slice(0, 300).join('') + ' a different ending';
    await A.post('/api/data/posts', p.sk, { title: 'Same start', body: sibling });
    const exact = await A.get(`/api/data/posts?body=${encodeURIComponent(sibling)}`, p.sk);
    expect(items(exact).map((d) => d.title)).toEqual(['Same start']);
    const titles = await A.get(`/api/data/posts?title_in=${encodeURIComponent('Same start,Fifty thousand')}&sort=title`, p.sk);
    expect(items(titles).map((d) => d.title)).toEqual(['Fifty thousand', 'Same start']);
    const sorted = await A.get('/api/data/posts?sort=body&limit=100', p.sk);
    const bodies = items(sorted).map((d) => String(d.body));
    expect(bodies).toEqual([...bodies].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
  });

  it('the String index is on the bounded prefix (plinth_key), so no value is too long for it', async () => {
    const { rows } = await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE indexname LIKE ${`dx_${postsId}_%`}`.execute(env.ctx.db.admin);
    const defs = rows.map((r) => r.indexdef).join('\n');
    expect(defs).toMatch(/plinth_key\(data, 'body'::text\)/);
    expect(defs).not.toMatch(/plinth_txt\(data, 'body'::text\)/);
  });

  it('a collection indexed the old way is rebuilt at start-up (reconcileAllIndexes)', async () => {
    const old = await createCollection(env, p, 'legacy', [{ key: 'note', type: 'String' }]);
    const table = `documents_${old._id}`;
    await sql.raw(`DROP INDEX ${(await indexNames(old._id))[0]}`).execute(env.ctx.db.admin);
    await sql.raw(`CREATE INDEX dx_${old._id}_0123456789 ON ${table} (plinth_txt(data, 'note'), created_at DESC, id DESC)`).execute(env.ctx.db.admin);
    expect((await A.post('/api/data/legacy', p.sk, { note: longText(5000) })).status).toBe(400);
    const failures: unknown[] = [];
    expect(await reconcileAllIndexes(env.ctx.db.admin, (_id, err) => failures.push(err))).toBeGreaterThanOrEqual(1);
    expect(failures).toEqual([]);
    expect(await indexNames(old._id)).not.toContain(`dx_${old._id}_0123456789`);
    expect((await A.post('/api/data/legacy', p.sk, { note: longText(5000) })).status).toBe(201);
    expect(await reconcileAllIndexes(env.ctx.db.admin, () => {})).toBe(0); // nothing left to do
  });
});

async function indexNames(collectionId: string): Promise<string[]> {
  const { rows } = await sql<{ indexname: string }>`SELECT indexname FROM pg_indexes WHERE indexname ~ ${`^d[uxcg]_${collectionId}_`}`.execute(env.ctx.db.admin);
  return rows.map((r) => r.indexname);
}

describe('filters on an Array field match an element', () => {
  beforeAll(async () => {
    const docs = [
      ...Array.from({ length: 6 }, (_, i) => ({ title: `tagged ${i}`, tags: ['news', 'café'], scores: [i, 10] })),
      { title: 'other', tags: ['news'], scores: [3] },
      { title: 'none', tags: [] },
    ];
    for (const d of docs) expect((await A.post('/api/data/posts', p.sk, d)).status).toBe(201);
  });

  it('tags=café finds the six posts that carry it (it found none)', async () => {
    const r = await A.get(`/api/data/posts?tags=${encodeURIComponent('café')}&limit=50`, p.sk);
    expect(r.status).toBe(200);
    expect(items(r).map((d) => d.title).sort()).toEqual(['tagged 0', 'tagged 1', 'tagged 2', 'tagged 3', 'tagged 4', 'tagged 5']);
  });

  it('tags_in matches any element; tags_ne excludes the carriers; Number items typed', async () => {
    const any = await A.get(`/api/data/posts?tags_in=${encodeURIComponent('café,zzz')}&limit=50`, p.sk);
    expect(items(any)).toHaveLength(6);
    const ne = await A.get(`/api/data/posts?tags_ne=${encodeURIComponent('café')}&tags_exists=true&limit=50`, p.sk);
    expect(items(ne).map((d) => d.title).sort()).toEqual(['none', 'other']);
    const nums = await A.get('/api/data/posts?scores=3&limit=50', p.sk);
    expect(items(nums).map((d) => d.title).sort()).toEqual(['other', 'tagged 3']);
    expect((await A.get('/api/data/posts?scores=abc', p.sk)).status).toBe(400);
  });

  it('an undeclared array field matches an element too (loose)', async () => {
    await A.post('/api/data/posts', p.sk, { title: 'labels', labels: ['urgent', 7] });
    expect(items(await A.get('/api/data/posts?labels=urgent', p.sk)).map((d) => d.title)).toEqual(['labels']);
    expect(items(await A.get('/api/data/posts?labels=7', p.sk)).map((d) => d.title)).toEqual(['labels']);
  });

  it('a field declared index: true gets a GIN index that the element filter uses', async () => {
    const names = await indexNames(postsId);
    expect(names.some((n) => n.startsWith(`dg_${postsId}_`))).toBe(true);
    const plan = await env.ctx.db.admin.transaction().execute(async (tx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(tx);
      const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN SELECT id FROM ${sql.table(`documents_${postsId}`)} WHERE (data -> ${'tags'}::text) @> ${'"café"'}::jsonb`.execute(tx);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Bitmap Index Scan on dg_/);
  });

  it('realtime subscriptions match the same documents as the list', async () => {
    const col = (await env.ctx.collections.get(p.id, 'posts'))!;
    const match = compileFilters(col, [{ field: 'tags', op: 'eq', values: ['café'] }]);
    const doc = (data: Record<string, unknown>) => ({ id: 'x', data, createdMs: 0, updatedMs: 0 });
    expect(match(doc({ tags: ['news', 'café'] }))).toBe(true);
    expect(match(doc({ tags: ['news'] }))).toBe(false);
  });
});

describe('a Date filter takes what a Date field takes', () => {
  it('publishedAt_lt=<epoch ms> is a date, not a 400', async () => {
    await A.post('/api/data/posts', p.sk, { title: 'dated', publishedAt: 1773500000000 });
    const r = await A.get('/api/data/posts?publishedAt_lt=1773600000000', p.sk);
    expect(r.status).toBe(200);
    expect(items(r).map((d) => d.title)).toEqual(['dated']);
    expect(items(await A.get('/api/data/posts?publishedAt_gt=1773600000000', p.sk))).toHaveLength(0);
  });
});
