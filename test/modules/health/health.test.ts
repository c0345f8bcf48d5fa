import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

describe('GET /api/health', () => {
  it('reports a connected database', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', dependencies: { database: 'connected' } });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{24}$/);
  });

  it('answers unknown routes with a 404 error envelope', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ success: false, data: {}, message: 'Not Found', error: 'Not Found', code: 'not_found' });
  });
});
