/**
 * GET /api/projects/:projectId/usage: the quota counters against the plan, as the console's
 * usage screen shows them; another operator's project is 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestProject } from '../../helpers/fixtures.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
});
afterAll(() => env.close());

const get = (auth = p.owner.auth) => env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/usage`, headers: auth });

describe('usage', () => {
  it('counts database bytes, collections and mail this month against the free plan', async () => {
    await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name: 'notes', schema: [{ key: 't', type: 'String' }] } });
    await env.app.inject({ method: 'POST', url: '/api/data/notes', headers: p.sk, payload: { t: 'hello' } });
    await env.app.inject({ method: 'POST', url: '/api/mail/send', headers: p.sk, payload: { to: 'a@example.com', subject: 'Hi', text: 'x' } });
    const res = await get();
    expect(res.statusCode).toBe(200);
    const u = res.json().data;
    expect(u.period).toMatch(/^\d{4}-\d{2}$/);
    expect(u.plan).toBe('free');
    expect(u.database.used).toBeGreaterThan(0);
    expect(u.database.limit).toBe(50 * 1024 * 1024);
    expect(u.collections).toEqual({ used: 1, limit: 20 });
    expect(u.mail).toEqual({ used: 1, limit: 100, provider: 'outbox' });
    expect(u.storage).toEqual({ used: 0, limit: 20 * 1024 * 1024, files: 0 });
    expect(u.aiSessions).toEqual({ used: 0, limit: 5 });
  });

  it("is 404 for another operator's project", async () => {
    const stranger = await makeOperator(env.ctx);
    const res = await get(stranger.auth);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('project_not_found');
  });
});
