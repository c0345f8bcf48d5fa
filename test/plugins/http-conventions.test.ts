/**
 * The conventions every route shares (docs/wire-compatibility.md §1): envelopes, client mistakes as 4xx (never
 * 500), CORS for credentialed browser calls, request ids, and logs that never carry keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeProject, type TestProject } from '../helpers/fixtures.js';

let env: TestEnv;
let project: TestProject;

beforeAll(async () => {
  env = await createTestEnv({ BODY_LIMIT: '2kb', DASHBOARD_URL: 'https://dash.example.com' });
  project = await makeProject(env.ctx);
  await makeCollection(env.ctx, project.id, 'notes');
});
afterAll(() => env.close());

const json = { 'content-type': 'application/json' };

describe('client mistakes are 4xx with the error envelope', () => {
  it('malformed JSON is 400', async () => {
    const res = await env.app.inject({ method: 'POST', url: '/api/auth/login', headers: json, payload: '{"email": "a@b.c",' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ success: false, data: {}, code: 'invalid_json' });
    expect(res.json().message).toBe(res.json().error);
  });

  it('a body over BODY_LIMIT is 413', async () => {
    const res = await env.app.inject({
      method: 'POST', url: '/api/data/notes', headers: { ...json, ...project.sk }, payload: JSON.stringify({ text: 'x'.repeat(4096) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ success: false, code: 'payload_too_large' });
  });

  it('prototype pollution keys in a body are 400', async () => {
    const res = await env.app.inject({ method: 'POST', url: '/api/data/notes', headers: { ...json, ...project.sk }, payload: '{"__proto__": {"admin": true}}' });
    expect(res.statusCode).toBe(400);
  });

  it('an unsupported content type is 415, an empty JSON body 400', async () => {
    const ct = await env.app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'text/xml' }, payload: '<a/>' });
    expect(ct.statusCode).toBe(415);
    const empty = await env.app.inject({ method: 'POST', url: '/api/auth/login', headers: json, payload: '' });
    expect(empty.statusCode).toBe(400);
  });

  it('a missing key is 401 and an unknown one 401 with the SDK texts', async () => {
    const none = await env.app.inject({ method: 'GET', url: '/api/data/notes' });
    expect(none.statusCode).toBe(401);
    expect(none.json().message).toBe('API key not found');
    const bad = await env.app.inject({ method: 'GET', url: '/api/data/notes', headers: { 'x-api-key': 'sk_live_nope' } });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().message).toBe('API key is expired or invalid.');
  });
});

describe('CORS', () => {
  it('public routes echo the origin with credentials and expose the refresh header', async () => {
    const res = await env.app.inject({
      method: 'OPTIONS', url: '/api/data/notes',
      headers: { origin: 'https://app.example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, authorization, content-type, x-refresh-token, x-refresh-token-mode' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.org');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(String(res.headers['access-control-allow-headers'])).toContain('x-refresh-token-mode');
    expect(String(res.headers['access-control-allow-methods'])).toContain('PATCH');
    const get = await env.app.inject({ method: 'GET', url: '/api/data/notes', headers: { origin: 'https://app.example.org', ...project.pk } });
    expect(get.headers['access-control-expose-headers']).toContain('x-refresh-token');
    expect(get.headers['access-control-expose-headers']).toContain('Retry-After');
    expect(get.headers.vary).toContain('Origin');
  });

  it('dashboard routes answer only the dashboard origins', async () => {
    const ok = await env.app.inject({ method: 'GET', url: '/api/projects', headers: { origin: 'https://dash.example.com', ...project.owner.auth } });
    expect(ok.headers['access-control-allow-origin']).toBe('https://dash.example.com');
    const evil = await env.app.inject({ method: 'GET', url: '/api/projects', headers: { origin: 'https://evil.example', ...project.owner.auth } });
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('request ids and logs', () => {
  it('echoes a caller-given request id and generates one otherwise', async () => {
    const given = await env.app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers['x-request-id']).toBe('trace-123');
    const made = await env.app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f]{24}$/);
  });

  it('never logs API keys, from headers or the query string', async () => {
    await env.app.inject({ method: 'GET', url: '/api/data/notes', headers: project.sk });
    await env.app.inject({ method: 'GET', url: `/api/data/notes?key=${project.publishableKey}&limit=1` });
    const all = env.logs.join('\n');
    expect(all).toContain('/api/data/notes');
    expect(all).not.toContain(project.secretKey);
    expect(all).not.toContain(project.publishableKey);
  });

  it('serves the OpenAPI document generated from the route schemas', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const paths = Object.keys(res.json().paths);
    for (const p of ['/api/health', '/api/data/{collectionName}', '/api/userAuth/signup', '/api/storage/upload-request', '/api/projects', '/api/auth/login']) {
      expect(paths).toContain(p);
    }
    expect(res.json().openapi).toMatch(/^3\./);
  });
});
