/** POST /api/projects/:projectId/ai/schema-suggest end to end (validated by collections/fields.ts). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeCollection, makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { createAiEnv, putAccountKey, suggestSchema, type AiTestEnv } from './setup.js';

let t: AiTestEnv;
let op: TestOperator;
let project: TestProject;

beforeAll(async () => {
  t = await createAiEnv();
  op = await makeOperator(t.env.ctx);
  project = await makeProject(t.env.ctx, op);
  await makeCollection(t.env.ctx, project.id, 'authors', [{ key: 'name', type: 'String' }]);
  await putAccountKey(t.env, op, 'gsk_personal_for_schema');
});
afterAll(() => t.close());
beforeEach(() => t.groq.reset());

const answer = (value: unknown) => ({ content: JSON.stringify(value) });
const ask = (body: Record<string, unknown> = { description: 'A blog: posts with a title, tags and an author' }) =>
  suggestSchema(t.env, op, project.id, body);

describe('schema assistant', () => {
  it('returns a validated schema in our field format, ready for POST /collections', async () => {
    t.groq.enqueue(
      answer({
        collectionName: 'posts',
        fields: [
          { key: 'title', type: 'String', required: true, unique: true, description: 'dropped: not our format' },
          { key: 'views', type: 'Number', default: 0 },
          { key: 'tags', type: 'Array', items: { type: 'String' } },
          { key: 'author', type: 'Ref', ref: 'authors' },
          { key: 'seo', type: 'Object', fields: [{ key: 'slug', type: 'String' }] },
          { key: 'createdAt', type: 'Date' },
        ],
        explanation: 'Posts reference their author.',
      }),
    );
    const res = await ask();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      message: 'Schema suggested.',
      data: {
        collectionName: 'posts',
        schema: [
          { key: 'title', type: 'String', required: true, unique: true },
          { key: 'views', type: 'Number', default: 0 },
          { key: 'tags', type: 'Array', items: { type: 'String' } },
          { key: 'author', type: 'Ref', ref: 'authors' },
          { key: 'seo', type: 'Object', fields: [{ key: 'slug', type: 'String' }] },
        ],
        explanation: 'Posts reference their author.',
      },
    });
    const system = t.groq.requests[0]!.body.messages![0]!.content;
    expect(system).toContain('"authors"');
  });

  it('uses the requested collection name', async () => {
    t.groq.enqueue(answer({ collectionName: 'whatever', fields: [{ key: 'a', type: 'String' }] }));
    const res = await ask({ description: 'x', collectionName: 'articles' });
    expect(res.json().data.collectionName).toBe('articles');
  });

  it.each([
    ['malformed JSON', { content: 'fields: title' }, /malformed JSON/],
    ['no fields', answer({ collectionName: 'x', fields: [] }), /no 'fields'/],
    ['an unknown type', answer({ collectionName: 'x', fields: [{ key: 'a', type: 'Varchar(255)' }] }), /invalid type/],
    ['a key with a dot', answer({ collectionName: 'x', fields: [{ key: 'a.b', type: 'String' }] }), /Invalid field key/],
    ['a $ key', answer({ collectionName: 'x', fields: [{ key: '$where', type: 'String' }] }), /Invalid field key/],
    ['an Object without fields', answer({ collectionName: 'x', fields: [{ key: 'o', type: 'Object' }] }), /needs non-empty fields/],
    ['an Array without items', answer({ collectionName: 'x', fields: [{ key: 'l', type: 'Array' }] }), /needs items/],
    ['a Ref without ref', answer({ collectionName: 'x', fields: [{ key: 'r', type: 'Ref' }] }), /needs ref/],
    ['unique on a nested field', answer({ collectionName: 'x', fields: [{ key: 'o', type: 'Object', fields: [{ key: 'u', type: 'String', unique: true }] }] }), /unique is only supported/],
    ['a bad collection name', answer({ collectionName: 'drop table; --', fields: [{ key: 'a', type: 'String' }] }), /collection name/],
    ['a non-boolean required', answer({ collectionName: 'x', fields: [{ key: 'a', type: 'String', required: 'yes' }] }), /required must be a boolean/],
    ['a default on a required field', answer({ collectionName: 'x', fields: [{ key: 'a', type: 'String', required: true, default: 'z' }] }), /required fields cannot have defaults/],
    ['duplicate keys', answer({ collectionName: 'x', fields: [{ key: 'a', type: 'String' }, { key: 'a', type: 'Number' }] }), /Duplicate field key/],
    ['a refusal', answer({ error: 'not a schema' }), /could not answer/],
  ])('%s → 422', async (_name, reply, message) => {
    t.groq.enqueue(reply);
    const res = await ask();
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('ai_output_invalid');
    expect(res.json().message).toMatch(message);
  });

  it('400 for an empty or oversized description, 404 for another operator’s project', async () => {
    expect((await ask({ description: '' })).statusCode).toBe(400);
    expect((await ask({ description: 'x'.repeat(2001) })).statusCode).toBe(400);
    const stranger = await makeOperator(t.env.ctx);
    expect((await suggestSchema(t.env, stranger, project.id, { description: 'x' })).statusCode).toBe(404);
    expect(t.groq.requests).toHaveLength(0);
  });
});
