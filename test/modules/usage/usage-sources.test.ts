/**
 * The usage history's counted sources through their real paths (docs/dashboard.md "Usage
 * history"), against a real PostgreSQL and a fake AI provider on loopback: an HTTP function's
 * invocations and failures, and the AI calls of the schema assistant (a failed one too),
 * read back through the dashboard route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { createAiEnv, suggestSchema, type AiTestEnv } from '../ai/setup.js';

const HOUR = 3600_000;
let t: AiTestEnv;
let op: TestOperator;
let p: TestProject;

async function series(metrics: string): Promise<Record<string, Array<number | null>>> {
  const hour = new Date(Math.floor(t.env.clock.now().getTime() / HOUR) * HOUR);
  const res = await t.env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/usage/history?from=${hour.toISOString()}&metrics=${metrics}`, headers: op.auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.series;
}

beforeAll(async () => {
  t = await createAiEnv();
  op = await makeOperator(t.env.ctx, { plan: 'pro' });
  p = await makeProject(t.env.ctx, op);
});
afterAll(() => t.close());

describe('usage history sources', () => {
  it('counts HTTP function invocations and their failures', async () => {
    const deployed = await t.env.app.inject({
      method: 'POST',
      url: `/api/projects/${p.id}/functions`,
      headers: op.auth,
      payload: { name: 'maybe', kind: 'http', source: `export default (req) => { if (req.query.fail) throw new Error('no'); return { ok: true }; }` },
    });
    expect(deployed.statusCode, deployed.body).toBe(201);
    for (const q of ['', '', '?fail=1']) {
      const res = await t.env.app.inject({ method: 'GET', url: `/api/functions/maybe${q}`, headers: p.pk });
      expect(res.statusCode).toBe(q ? 502 : 200); // function_error
    }
    const s = await series('functions,requests.apiKey');
    expect(s['functions.invocations']).toEqual([3]);
    expect(s['functions.errors']).toEqual([1]);
    // The same calls are app requests too, by class.
    expect(s['requests.apiKey.2xx']).toEqual([2]);
    expect(s['requests.apiKey.5xx']).toEqual([1]);
  });

  it('counts the AI calls made for the project, failed ones too', async () => {
    t.groq.enqueue({ content: JSON.stringify({ collectionName: 'books', fields: [{ key: 'title', type: 'String' }] }) });
    expect((await suggestSchema(t.env, op, p.id, { description: 'books with a title' })).statusCode).toBe(200);
    t.groq.enqueue({ status: 500, content: 'upstream down' });
    expect((await suggestSchema(t.env, op, p.id, { description: 'books again' })).statusCode).toBeGreaterThanOrEqual(500);
    expect((await series('ai'))['ai.calls']).toEqual([2]);
  });
});
