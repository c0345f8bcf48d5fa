/**
 * Declared compound indexes: validated against the schema, built on the collection's
 * partition, used by lists that filter on several fields, kept in step with schema changes.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
const base = () => `/api/projects/${p.id}/collections`;
const FIELDS = [
  { key: 'category', type: 'String' },
  { key: 'price', type: 'Number' },
  { key: 'at', type: 'Date' },
  { key: 'inStock', type: 'Boolean' },
  { key: 'meta', type: 'Object', fields: [{ key: 'x', type: 'String' }] },
];

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
});
afterAll(() => env.close());

const compoundIndexes = async (collectionId: string) =>
  (await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE indexname LIKE ${`dc\\_${collectionId}\\_%`} ORDER BY indexname`
    .execute(env.ctx.db.admin)).rows.map((r) => r.indexdef);

describe('declaring compound indexes', () => {
  const invalid: Array<[string, unknown, RegExp]> = [
    ['one field', [{ fields: ['category'] }], /2 to 4 fields/],
    ['five fields', [{ fields: ['category', 'price', 'at', 'inStock', 'category'] }], /2 to 4 fields/],
    ['an undeclared field', [{ fields: ['category', 'colour'] }], /'colour' must be a declared top-level/],
    ['an Object field', [{ fields: ['category', 'meta'] }], /'meta' must be a declared top-level/],
    ['a nested path', [{ fields: ['category', 'meta.x'] }], /'meta.x' must be a declared top-level/],
    ['a field twice', [{ fields: ['price', 'price'] }], /each field once/],
    ['the same index twice', [{ fields: ['category', 'price'] }, { fields: ['category', 'price'] }], /declared twice/],
    ['nine indexes', Array.from({ length: 9 }, (_, i) => ({ fields: i % 2 ? ['price', 'category'] : ['category', 'price'] })), /At most 8/],
  ];
  it.each(invalid)('rejects %s with 400 and the reason', async (_name, indexes, reason) => {
    const r = await A.post(base(), p.owner.auth, { name: 'bad', schema: FIELDS, indexes });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(reason);
    expect((await A.get(`${base()}/bad`, p.owner.auth)).status).toBe(404);
  });

  it('builds each on the collection partition and shows it on the collection and schema records', async () => {
    const r = await A.post(base(), p.owner.auth, { name: 'shop', schema: FIELDS, indexes: [{ fields: ['category', 'price'] }, { fields: ['inStock', 'at'] }] });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.data.indexes).toEqual([{ fields: ['category', 'price'] }, { fields: ['inStock', 'at'] }]);
    const defs = await compoundIndexes(r.body.data._id);
    expect(defs).toHaveLength(2);
    expect(defs.join('\n')).toContain(`ON public.documents_${r.body.data._id} USING btree (plinth_key(data, 'category'::text), plinth_num(data, 'price'::text), created_at DESC, id DESC)`);
    const schema = await A.get('/api/schemas/shop', p.sk);
    expect(schema.body.data.collection.indexes).toEqual([{ fields: ['category', 'price'] }, { fields: ['inStock', 'at'] }]);
  });

  it('POST /api/schemas (secret key) declares them too', async () => {
    const r = await A.post('/api/schemas', p.sk, { name: 'viaApi', fields: FIELDS.slice(0, 2), indexes: [{ fields: ['price', 'category'] }] });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(await compoundIndexes(r.body.data.collection._id)).toHaveLength(1);
  });
});

describe('lists on several fields', () => {
  it('answers an equality + range + sort with the exact total from the compound index', async () => {
    const col = (await A.get(`${base()}/shop`, p.owner.auth)).body.data;
    await sql`INSERT INTO documents (project_id, collection_id, id, data)
      SELECT ${p.id}, ${col._id}, lpad(to_hex(g), 24, '0'), jsonb_build_object('category', 'c' || (g % 4), 'price', g)
      FROM generate_series(1, 400) g`.execute(env.ctx.db.admin);
    await sql.raw(`ANALYZE documents_${col._id}`).execute(env.ctx.db.admin);
    const r = await A.get('/api/data/shop?category=c1&price_gte=100&price_lt=200&sort=-price&limit=5&include_total=true', p.sk);
    expect(r.status).toBe(200);
    expect(r.body.data.total).toBe(25);
    expect(r.body.data.items.map((d: { price: number }) => d.price)).toEqual([197, 193, 189, 185, 181]);
    const plan = await env.ctx.db.read({ projectId: p.id, keyKind: 'secret' }, (db) =>
      sql<{ 'QUERY PLAN': string }>`EXPLAIN (COSTS OFF) SELECT count(*) FROM documents
        WHERE collection_id = ${sql.lit(col._id)} AND plinth_key(data, 'category') = 'c1' AND plinth_num(data, 'price') >= 100 AND plinth_num(data, 'price') < 200`.execute(db));
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toMatch(new RegExp(`dc_${col._id}_`));
    expect(text).not.toMatch(/Filter: .*plinth_num/);
  });
});

describe('schema changes', () => {
  it('refuse to drop a field an index uses, unless the same change drops the index', async () => {
    const id = (await A.get(`${base()}/shop`, p.owner.auth)).body.data._id;
    const withoutPrice = FIELDS.filter((f) => f.key !== 'price');
    const refused = await A.patch(`${base()}/shop`, p.owner.auth, { schema: withoutPrice });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/'price' must be a declared top-level/);
    expect(await compoundIndexes(id)).toHaveLength(2);
    const ok = await A.patch(`${base()}/shop`, p.owner.auth, { schema: withoutPrice, indexes: [{ fields: ['inStock', 'at'] }] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.indexes).toEqual([{ fields: ['inStock', 'at'] }]);
    const defs = await compoundIndexes(id);
    expect(defs).toHaveLength(1);
    expect(defs[0]).toContain("plinth_txt(data, 'inStock'::text), plinth_txt(data, 'at'::text)");
  });
});
