/**
 * A value longer than a B-tree index entry can hold (about 2 700 bytes) in an indexed or unique
 * field is the client's mistake: a 400 naming the field's limit, never a 500, and nothing stored.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
/** Random hex does not compress, so PostgreSQL cannot squeeze it into an index entry. */
const huge = randomBytes(4000).toString('hex');

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  await createCollection(env, p, 'notes', [{ key: 'slug', type: 'String', unique: true }, { key: 'code', type: 'String', unique: true }, { key: 'title', type: 'String' }]);
});
afterAll(() => env.close());

const stored = async () => (await A.get('/api/data/notes?limit=100', p.sk)).body.data;

describe('an oversized value in an indexed field', () => {
  it.each([['slug', 'slug'], ['code', 'code']])('unique %s: 400 on create, nothing stored', async (_label, key) => {
    const r = await A.post('/api/data/notes', p.sk, { [key]: huge });
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
    expect(r.body.message).toMatch(/too long/i);
    const list = await stored();
    expect(list.items ?? list).toHaveLength(0);
  });

  it('400 on update, the document keeps its value', async () => {
    const c = await A.post('/api/data/notes', p.sk, { slug: 'a', code: 'c1', title: 'short' });
    expect(c.status).toBe(201);
    const u = await A.patch(`/api/data/notes/${c.body._id}`, p.sk, { code: huge });
    expect(u.status).toBe(400);
    expect((await A.get(`/api/data/notes/${c.body._id}`, p.sk)).body.data.code).toBe('c1');
  });

  it('a bulk insert with one oversized value inserts nothing', async () => {
    const r = await A.post('/api/data/notes/bulk', p.sk, [{ slug: 'b1' }, { slug: huge }]);
    expect(r.status).toBe(400);
    expect((await A.get('/api/data/notes?slug=b1', p.sk)).body.data.total).toBe(0);
  });
});
