/**
 * The AI output is usable as is: a suggested schema creates a collection through
 * POST /api/projects/:projectId/collections, and a built query string is accepted by
 * GET /api/data/:collection and selects the documents the model meant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryAnswer } from '../../fakes/groq.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { buildQuery, createAiEnv, suggestSchema, type AiTestEnv } from './setup.js';

let t: AiTestEnv;
let op: TestOperator;
let project: TestProject;

beforeAll(async () => {
  t = await createAiEnv();
  op = await makeOperator(t.env.ctx, { plan: 'pro' });
  project = await makeProject(t.env.ctx, op);
});
afterAll(() => t.close());

describe('AI output feeds the real endpoints', () => {
  it('suggest a schema → create the collection → insert → build a query → list', async () => {
    t.groq.enqueue({
      content: JSON.stringify({
        collectionName: 'books',
        fields: [
          { key: 'title', type: 'String', required: true },
          { key: 'pages', type: 'Number' },
          { key: 'published', type: 'Boolean' },
          { key: 'tags', type: 'Array', items: { type: 'String' } },
        ],
      }),
    });
    const suggested = await suggestSchema(t.env, op, project.id, { description: 'books with a title, page count and tags' });
    expect(suggested.statusCode).toBe(200);
    const { collectionName, schema } = suggested.json().data;
    const created = await t.env.app.inject({
      method: 'POST',
      url: `/api/projects/${project.id}/collections`,
      headers: op.auth,
      payload: { collectionName, schema },
    });
    expect(created.statusCode).toBe(201);

    for (const [title, pages, published, tags] of [
      ['Short', 90, true, ['fun']],
      ['Long', 900, true, ['epic', 'fun']],
      ['Draft', 300, false, ['fun']],
      ['Middle', 250, true, ['dry']],
    ] as const) {
      const res = await t.env.app.inject({ method: 'POST', url: '/api/data/books', headers: project.sk, payload: { title, pages, published, tags } });
      expect(res.statusCode).toBeLessThan(300);
    }

    t.groq.enqueue(
      queryAnswer({
        filters: [
          { field: 'pages', op: 'gte', value: 100 },
          { field: 'published', op: 'eq', value: true },
          { field: 'title', op: 'in', value: ['Long', 'Middle', 'Draft'] },
          { field: 'tags', op: 'regex', value: 'fun|dry' },
        ],
        sort: [{ field: 'pages', order: 'desc' }],
        limit: 10,
      }),
    );
    const built = await buildQuery(t.env, op, project.id, { collection: 'books', prompt: 'published books of 100+ pages, longest first' });
    expect(built.statusCode).toBe(200);
    const list = await t.env.app.inject({ method: 'GET', url: `/api/data/books?${built.json().data.queryString}`, headers: project.sk });
    expect(list.statusCode).toBe(200);
    const items = list.json().data.items as Array<{ title: string }>;
    expect(items.map((d) => d.title)).toEqual(['Long', 'Middle']);
  });
});
