/** POST /api/projects/:projectId/ai/query-builder end to end, against the fake provider. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FieldDef } from '../../../src/db/types.js';
import { queryAnswer } from '../../fakes/groq.js';
import { makeCollection, makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { buildQuery, createAiEnv, type AiTestEnv } from './setup.js';

let t: AiTestEnv;
let op: TestOperator;
let project: TestProject;

const PRODUCTS: FieldDef[] = [
  { key: 'name', type: 'String', required: true },
  { key: 'price', type: 'Number' },
  { key: 'inStock', type: 'Boolean' },
  { key: 'releasedAt', type: 'Date' },
  { key: 'category', type: 'Ref', ref: 'categories' },
  { key: 'tags', type: 'Array', items: { type: 'String' } },
  { key: 'meta', type: 'Object', fields: [{ key: 'color', type: 'String' }] },
];

beforeAll(async () => {
  t = await createAiEnv();
  op = await makeOperator(t.env.ctx, { plan: 'pro' });
  project = await makeProject(t.env.ctx, op);
  await makeCollection(t.env.ctx, project.id, 'products', PRODUCTS);
});
afterAll(() => t.close());
beforeEach(() => t.groq.reset());

const ask = (prompt = 'cheap products in stock', collection = 'products') => buildQuery(t.env, op, project.id, { collection, prompt });

describe('query builder', () => {
  it('turns the model answer into a validated query and a /api/data query string', async () => {
    t.groq.enqueue(
      queryAnswer({
        filters: [
          { field: 'price', op: 'lt', value: 20 },
          { field: 'inStock', op: 'eq', value: true },
          { field: 'tags', op: 'regex', value: 'sale' },
          { field: 'name', op: 'regex', value: '^blue' },
          { field: 'releasedAt', op: 'gte', value: '2024-01-01' },
          { field: 'meta', op: 'exists', value: true },
        ],
        sort: [{ field: 'price', order: 'asc' }, { field: 'createdAt', order: 'desc' }],
        limit: 10,
        explanation: 'Products under 20 that are in stock, cheapest first.',
      }),
    );
    const res = await ask();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      message: 'Query built.',
      data: {
        query: {
          filters: {
            price_lt: '20',
            inStock: 'true',
            tags_regex: 'sale',
            name_regex: '^blue',
            releasedAt_gte: '2024-01-01T00:00:00.000Z',
            meta_exists: 'true',
          },
          sort: 'price:asc,-createdAt',
          limit: 10,
        },
        queryString:
          'price_lt=20&inStock=true&tags_regex=sale&name_regex=%5Eblue&releasedAt_gte=2024-01-01T00%3A00%3A00.000Z&meta_exists=true&sort=price%3Aasc%2C-createdAt&limit=10',
        explanation: 'Products under 20 that are in stock, cheapest first.',
      },
    });
  });

  it('the query string round-trips through a standard query parser', async () => {
    t.groq.enqueue(queryAnswer({ filters: [{ field: 'name', op: 'eq', value: 'A & B = C?' }], sort: [], limit: 5 }));
    const res = await ask();
    const params = new URLSearchParams(res.json().data.queryString);
    expect(params.get('name')).toBe('A & B = C?');
    expect(params.get('limit')).toBe('5');
    expect(params.has('sort')).toBe(false);
  });

  it('defaults: no filters, no sort, limit 20; a limit above 100 is capped at 100', async () => {
    t.groq.enqueue(queryAnswer({ explanation: 'all' }), queryAnswer({ limit: 500 }));
    const first = (await ask()).json().data;
    expect(first.query).toEqual({ filters: {}, sort: null, limit: 20 });
    expect(first.queryString).toBe('limit=20');
    expect((await ask()).json().data.query.limit).toBe(100);
  });

  it('system fields can be filtered and sorted', async () => {
    t.groq.enqueue(
      queryAnswer({
        filters: [{ field: '_id', op: 'ne', value: '0123456789abcdef01234567' }, { field: 'updatedAt', op: 'lt', value: '2025-01-01T10:00:00Z' }],
        sort: [{ field: 'updatedAt', order: 'desc' }],
      }),
    );
    const res = await ask();
    expect(res.statusCode).toBe(200);
    expect(res.json().data.query.filters).toEqual({ _id_ne: '0123456789abcdef01234567', updatedAt_lt: '2025-01-01T10:00:00.000Z' });
  });

  it('tells the model the current date from the service clock', async () => {
    t.env.clock.set(new Date('2025-07-04T09:00:00Z'));
    await ask('products released this week');
    expect(t.groq.requests[0]!.body.messages![0]!.content).toContain('2025-07-04T09:00:00.000Z');
  });

  it('404 for an unknown collection, without calling the provider', async () => {
    const res = await ask('x', 'nope');
    expect(res.statusCode).toBe(404);
    expect(res.json().message).toBe("Collection 'nope' not found.");
    expect(t.groq.requests).toHaveLength(0);
  });

  it('a name no collection can have (NUL, spaces) is 404, not a database error', async () => {
    for (const name of ['a\u0000b', 'my products']) {
      const res = await ask('x', name);
      expect(res.statusCode, JSON.stringify(name)).toBe(404);
    }
    expect(t.groq.requests).toHaveLength(0);
  });

  it('finds the collection case-insensitively, like the data API', async () => {
    t.groq.enqueue(queryAnswer({ filters: [], sort: [], limit: 5 }));
    const res = await ask('five products', 'Products');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.queryString).toBe('limit=5');
  });

  it('400 for a prompt over 2000 characters, an empty prompt, or a missing collection', async () => {
    expect((await ask('x'.repeat(2001))).statusCode).toBe(400);
    expect((await ask('')).statusCode).toBe(400);
    const res = await t.env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/ai/query-builder`, headers: op.auth, payload: { prompt: 'x' } });
    expect(res.statusCode).toBe(400);
    expect(t.groq.requests).toHaveLength(0);
  });

  it('400 malformed project id, 404 for another operator’s project, 401 without a session', async () => {
    expect((await buildQuery(t.env, op, 'xyz', { collection: 'products', prompt: 'x' })).statusCode).toBe(400);
    const stranger = await makeOperator(t.env.ctx);
    expect((await buildQuery(t.env, stranger, project.id, { collection: 'products', prompt: 'x' })).statusCode).toBe(404);
    const anon = await t.env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/ai/query-builder`, payload: { collection: 'products', prompt: 'x' } });
    expect(anon.statusCode).toBe(401);
  });
});
