/**
 * Full-text search: words of any script (accents, Cyrillic, Greek, CJK separated by spaces)
 * with the default `simple` configuration, stemming with a language, ranking without a sort,
 * web search syntax, filters and RLS combined, and the GIN index used under row-level security.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;

const ARTICLES = [
  { title: 'Café au lait', body: 'Milk coffee from France', category: 'drinks' },
  { title: 'Привет мир', body: 'Первая статья', category: 'ru' },
  { title: 'Καλημέρα κόσμε', body: 'Ελληνικό κείμενο', category: 'el' },
  { title: '日本語 テキスト', body: '検索 できる', category: 'ja' },
  { title: 'The quick brown fox', body: 'jumps over the lazy dog', category: 'animals' },
  { title: 'Quick thinking', body: 'A quick answer, quick as a fox', category: 'animals' },
  { title: 'Slow cooking', body: 'Nothing quick here', category: 'food' },
];

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  const fields = [
    { key: 'title', type: 'String', searchable: true },
    { key: 'body', type: 'String', searchable: true },
    { key: 'category', type: 'String' },
    { key: 'userId', type: 'String' },
  ];
  await createCollection(env, p, 'articles', fields);
  expect((await A.post('/api/data/articles/bulk', p.sk, ARTICLES)).status).toBe(201);
});
afterAll(() => env.close());

const titles = async (qs: string, h: Record<string, string> = p.sk) => {
  const r = await A.get(`/api/data/articles?${qs}`, h);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.data.items as Array<{ title: string }>).map((d) => d.title);
};

describe('search beyond ASCII (simple configuration)', () => {
  it.each([
    ['café', 'Café au lait'],
    ['CAFÉ', 'Café au lait'],
    ['привет', 'Привет мир'],
    ['СТАТЬЯ', 'Привет мир'],
    ['мир!', 'Привет мир'],
    ['статьи', null],
    ['καλημέρα', 'Καλημέρα κόσμε'],
    ['日本語', '日本語 テキスト'],
    ['検索', '日本語 テキスト'],
  ])('%s', async (word, title) => {
    const found = await titles(`search=${encodeURIComponent(word)}`);
    if (title) expect(found).toEqual([title]);
    else expect(found).toEqual([]); // `simple` does not stem: another form of a word is another word
  });
});

describe('Greek final sigma (ς and σ fold alike)', () => {
  const greek = ['Ένας κόσμος', 'ΝΈΟΣ ΚΌΣΜΟΣ'];
  beforeAll(async () => {
    await createCollection(env, p, 'greek', [{ key: 'title', type: 'String', searchable: true }]);
    expect((await A.post('/api/data/greek/bulk', p.sk, greek.map((title) => ({ title })))).status).toBe(201);
  });
  const found = async (word: string) => {
    const r = await A.get(`/api/data/greek?search=${encodeURIComponent(word)}`, p.sk);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return (r.body.data.items as Array<{ title: string }>).map((d) => d.title).sort();
  };

  it.each(['ΚΌΣΜΟΣ', 'κόσμος', 'Κόσμος'])('a search for %s finds the word written with a final sigma and in capitals', async (word) => {
    expect(await found(word)).toEqual([...greek].sort());
  });

  it('a word ending in sigma elsewhere is still another word', async () => {
    expect(await found('νέοσ')).toEqual(['ΝΈΟΣ ΚΌΣΜΟΣ']);
    expect(await found('κόσμε')).toEqual([]);
  });
});

describe('ranking, syntax, filters', () => {
  it('without a sort, the most relevant first; with a sort, that order', async () => {
    const ranked = await titles('search=quick');
    expect(ranked[0]).toBe('Quick thinking');
    expect(ranked).toHaveLength(3);
    expect(await titles('search=quick&sort=title')).toEqual(['Quick thinking', 'Slow cooking', 'The quick brown fox']);
  });

  it('web search syntax: phrases, or, exclusion', async () => {
    expect(await titles('search=' + encodeURIComponent('"brown fox"'))).toEqual(['The quick brown fox']);
    expect((await titles('search=' + encodeURIComponent('café or привет'))).sort()).toEqual(['Café au lait', 'Привет мир']);
    expect((await titles('search=' + encodeURIComponent('quick -fox')))).toEqual(['Slow cooking']);
  });

  it('combines with filters, counts, cursor pages and aggregates', async () => {
    expect(await titles('search=quick&category=animals&sort=title')).toEqual(['Quick thinking', 'The quick brown fox']);
    expect((await A.get('/api/data/articles?search=quick&count=true', p.sk)).body.data.count).toBe(3);
    const page = await A.get('/api/data/articles?search=quick&cursor=&limit=2', p.sk);
    expect(page.body.data.items).toHaveLength(2);
    const next = await A.get(`/api/data/articles?search=quick&cursor=${page.body.data.nextCursor}&limit=2`, p.sk);
    expect(next.body.data.items).toHaveLength(1);
    const agg = await A.get('/api/data/articles/aggregate?search=quick&groupBy=category&count', p.sk);
    expect(agg.body.data.groups).toEqual([{ key: { category: 'animals' }, count: 2 }, { key: { category: 'food' }, count: 1 }]);
  });

  it('the stored vector follows updates, and a schema change re-indexes existing documents', async () => {
    await createCollection(env, p, 'notes', [{ key: 'a', type: 'String', searchable: true }, { key: 'b', type: 'String' }]);
    const doc = await A.post('/api/data/notes', p.sk, { a: 'alpha', b: 'bravo' });
    expect((await A.get('/api/data/notes?search=alpha', p.sk)).body.data.items).toHaveLength(1);
    expect((await A.get('/api/data/notes?search=bravo', p.sk)).body.data.items).toHaveLength(0);
    expect((await A.patch(`/api/data/notes/${doc.body._id}`, p.sk, { a: 'charlie' })).status).toBe(200);
    expect((await A.get('/api/data/notes?search=alpha', p.sk)).body.data.items).toHaveLength(0);
    expect((await A.get('/api/data/notes?search=charlie', p.sk)).body.data.items).toHaveLength(1);
    const patch = (schema: unknown[]) => env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/notes`, headers: p.owner.auth, payload: { schema } });
    expect((await patch([{ key: 'a', type: 'String' }, { key: 'b', type: 'String', searchable: true }])).statusCode).toBe(200);
    expect((await A.get('/api/data/notes?search=bravo', p.sk)).body.data.items).toHaveLength(1);
    expect((await A.get('/api/data/notes?search=charlie', p.sk)).body.data.items).toHaveLength(0);
    expect((await patch([{ key: 'a', type: 'String' }, { key: 'b', type: 'String' }])).statusCode).toBe(200);
    expect((await A.get('/api/data/notes?search=bravo', p.sk)).status).toBe(400);
  });

  it('a language stems words', async () => {
    await createCollection(env, p, 'posts_en', [{ key: 'text', type: 'String', searchable: true }]);
    await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/posts_en`, headers: p.owner.auth, payload: { schema: [{ key: 'text', type: 'String', searchable: true }], searchLanguage: 'english' } });
    expect((await A.post('/api/data/posts_en', p.sk, { text: 'She runs every morning' })).status).toBe(201);
    const r = await A.get('/api/data/posts_en?search=running', p.sk);
    expect(r.body.data.items.map((d: { text: string }) => d.text)).toEqual(['She runs every morning']);
  });
});

describe('bad input is 400', () => {
  it('no searchable field, a text too long', async () => {
    await createCollection(env, p, 'plain', [{ key: 'name', type: 'String' }]);
    const none = await A.get('/api/data/plain?search=x', p.sk);
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/no searchable fields/);
    expect((await A.get(`/api/data/articles?search=${'a'.repeat(300)}`, p.sk)).status).toBe(400);
  });

  it.each([
    [{ name: 'bad1', schema: [{ key: 'n', type: 'Number', searchable: true }] }, /only top-level String/],
    [{ name: 'bad2', schema: [{ key: 'o', type: 'Object', fields: [{ key: 's', type: 'String', searchable: true }] }] }, /only top-level String/],
    [{ name: 'bad3', schema: [{ key: 's', type: 'String', searchable: 'yes' }] }, /searchable must be a boolean/],
    [{ name: 'bad4', schema: [], searchLanguage: 'klingon' }, /Unknown searchLanguage/],
  ])('collection %#', async (payload, reason) => {
    const r = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload });
    expect(r.statusCode).toBe(400);
    expect(r.json().message).toMatch(reason);
  });
});

describe('access and the index', () => {
  it('a private collection searches only the caller\'s documents', async () => {
    const alice = objectId();
    const bob = objectId();
    await createCollection(env, p, 'diary', [{ key: 'text', type: 'String', searchable: true }, { key: 'userId', type: 'String' }], { enabled: true, mode: 'private', ownerField: 'userId' });
    const as = async (u: string) => ({ ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, u)}` });
    expect((await A.post('/api/data/diary', await as(alice), { text: 'secret plans' })).status).toBe(201);
    expect((await A.post('/api/data/diary', await as(bob), { text: 'secret recipes' })).status).toBe(201);
    const r = await A.get('/api/data/diary?search=secret', await as(alice));
    expect(r.body.data.items.map((d: { text: string }) => d.text)).toEqual(['secret plans']);
  });

  it('the GIN index serves the match under row-level security', async () => {
    const col = (await env.ctx.collections.get(p.id, 'articles'))!;
    // Enough documents that an index is worth it, then fresh statistics.
    await sql`INSERT INTO documents (project_id, collection_id, id, data, size_bytes, created_at, updated_at)
      SELECT ${p.id}, ${col.id}, lpad(to_hex(g), 24, '0'), jsonb_build_object('title', 'filler ' || g, 'body', 'text number ' || g), 60, now(), now()
      FROM generate_series(1, 5000) g`.execute(env.ctx.db.admin);
    await sql.raw(`ANALYZE documents_${col.id}`).execute(env.ctx.db.admin);
    const plan = await env.ctx.db.tenant({ projectId: p.id, keyKind: 'publishable' }, async (tx) => {
      const res = await sql<{ 'QUERY PLAN': string }>`EXPLAIN SELECT id FROM documents
        WHERE project_id = ${sql.lit(p.id)} AND collection_id = ${sql.lit(col.id)} AND deleted_at IS NULL
          AND search_vector @@ websearch_to_tsquery('simple', plinth_fold(${'quick'}::text))`.execute(tx);
      return res.rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan, plan).toMatch(/Bitmap Index Scan on ds_/);
    const leakproof = await sql<{ proleakproof: boolean }>`SELECT proleakproof FROM pg_proc WHERE proname = 'ts_match_vq'`.execute(env.ctx.db.admin);
    expect(leakproof.rows).toEqual([{ proleakproof: true }]);
  });
});
