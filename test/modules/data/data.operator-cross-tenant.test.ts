/**
 * Threat: an operator reaching another operator's documents through the dashboard data
 * routes. Every route answers 404 for a project that is not the caller's (as every dashboard
 * route does), nothing is read or changed; without a session 401; a cookie session without
 * the CSRF header cannot write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let victim: TestProject;
let attacker: TestOperator;
let docId: string;
let A: ReturnType<typeof api>;

beforeAll(async () => {
  env = await createTestEnv();
  A = api(env);
  victim = await makeProject(env.ctx);
  attacker = await makeOperator(env.ctx);
  await makeProject(env.ctx, attacker, 'attacker project');
  await createCollection(env, victim, 'secrets', [{ key: 'v', type: 'String' }]);
  docId = (await A.post(`/api/data/secrets`, victim.sk, { v: 'crown jewels' })).body._id;
});
afterAll(() => env.close());

function routes(projectId: string) {
  const b = `/api/projects/${projectId}/data/secrets`;
  return [
    { method: 'GET', url: b },
    { method: 'GET', url: `${b}?count=true` },
    { method: 'GET', url: `${b}/${docId}` },
    { method: 'GET', url: `${b}/export/ndjson` },
    { method: 'GET', url: `${b}/export/json` },
    { method: 'POST', url: b, payload: { v: 'planted' } },
    { method: 'POST', url: `${b}/bulk`, payload: [{ v: 'planted' }] },
    { method: 'POST', url: `${b}/import`, payload: [{ v: 'planted' }] },
    { method: 'PATCH', url: `${b}/${docId}`, payload: { v: 'stolen' } },
    { method: 'PUT', url: `${b}/${docId}`, payload: { v: 'stolen' } },
    { method: 'DELETE', url: `${b}/${docId}` },
    { method: 'DELETE', url: `${b}/${docId}?hard=true` },
    { method: 'POST', url: `${b}/${docId}/restore`, payload: {} },
    { method: 'POST', url: `${b}/bulk-delete`, payload: { ids: [docId], hard: true } },
    { method: 'POST', url: `${b}/bulk-restore`, payload: { ids: [docId] } },
  ] as const;
}

describe('another operator', () => {
  it('gets 404 on every data route of a project that is not theirs, and nothing changes', async () => {
    for (const r of routes(victim.id)) {
      const res = await env.app.inject({ ...r, headers: attacker.auth } as never);
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(404);
      expect(res.json().code, `${r.method} ${r.url}`).toBe('project_not_found');
      expect(res.body).not.toContain('crown jewels');
    }
    const still = await A.get(`/api/data/secrets/${docId}`, victim.sk);
    expect(still.body.data.v).toBe('crown jewels');
    expect((await A.get(`/api/data/secrets?count=true`, victim.sk)).body.data.count).toBe(1);
  });

  it('needs a session (401) and, with a cookie session, the CSRF header to write (403)', async () => {
    for (const r of routes(victim.id)) {
      const res = await env.app.inject({ ...r } as never);
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(401);
    }
    const cookie = { cookie: `accessToken=${victim.owner.token}; csrfToken=abc` };
    for (const r of routes(victim.id).filter((x) => x.method !== 'GET')) {
      const res = await env.app.inject({ ...r, headers: cookie } as never);
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(403);
    }
    const withCsrf = await env.app.inject({ method: 'GET', url: `/api/projects/${victim.id}/data/secrets`, headers: cookie });
    expect(withCsrf.statusCode).toBe(200);
    expect((await A.get(`/api/data/secrets/${docId}`, victim.sk)).body.data.v).toBe('crown jewels');
  });
});
