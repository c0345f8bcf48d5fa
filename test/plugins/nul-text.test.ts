/**
 * PostgreSQL cannot store NUL in text: a client string carrying one must be a 400 with the
 * error envelope, never a 500, whichever route it reaches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeOperator, makeProject, type TestProject } from '../helpers/fixtures.js';

let env: TestEnv;
let project: TestProject;
const NUL = 'a\u0000b';

beforeAll(async () => {
  env = await createTestEnv();
  project = await makeProject(env.ctx, await makeOperator(env.ctx));
});
afterAll(async () => {
  await env.close();
});

describe('NUL characters in stored text', () => {
  it.each([
    ['register name', { method: 'POST', url: '/api/auth/register', payload: { email: 'nul@example.com', password: 'long enough', name: NUL } }],
    ['project name', { method: 'POST', url: '/api/projects', payload: { name: NUL } }],
    ['project description', { method: 'POST', url: '/api/projects', payload: { name: 'ok', description: NUL } }],
    ['settings name', { method: 'PATCH', url: '/project', payload: { name: NUL } }],
    ['settings sender', { method: 'PATCH', url: '/project', payload: { providerFromEmail: `A${NUL} <a@b.co>` } }],
  ] as const)('%s answers 400 validation_failed', async (_name, req) => {
    const url = req.url === '/project' ? `/api/projects/${project.id}` : req.url;
    const res = await env.app.inject({ method: req.method, url, headers: project.owner.auth, payload: req.payload });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ success: false, code: 'validation_failed' });
  });
});
