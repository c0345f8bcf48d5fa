/**
 * Threat: a hostile website reads an operator's dashboard data (and its CSRF token) by asking
 * for a percent-encoded form of a dashboard path (`/api/%70rojects`) that a raw-URL CORS check
 * takes for a public route, while the router decodes it to the dashboard route. CORS must be
 * decided on the routed route: an encoded path gets its decoded form's policy, or a 404.
 * Also (docs/wire-compatibility.md §1.4): public preflights reflect the headers an app asks for (the SDK's
 * `headers` option), dashboard preflights keep a fixed list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeProject, type TestProject } from '../helpers/fixtures.js';

const DASH = 'https://dash.example.com';
const EVIL = 'https://evil.test';

let env: TestEnv;
let p: TestProject;
let cookie: string;

beforeAll(async () => {
  env = await createTestEnv({ DASHBOARD_URL: DASH });
  p = await makeProject(env.ctx);
  await makeCollection(env.ctx, p.id, 'notes');
  cookie = `accessToken=${p.owner.token}; csrfToken=abc`;
});
afterAll(() => env.close());

function preflight(url: string, origin: string, method = 'POST', headers = 'content-type, x-csrf-token') {
  return env.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

const ENCODED_DASHBOARD_GETS = ['/api/%70rojects', '/api/pr%6Fjects', '/%61pi/projects', '/api/auth/%63srf-token'];

describe('credentialed reads of dashboard routes from a foreign origin', () => {
  it('the plain path is answered without CORS grant (baseline)', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/projects', headers: { origin: EVIL, cookie } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it.each(ENCODED_DASHBOARD_GETS)('an encoded form (%s) does not reflect the foreign origin', async (url) => {
    const res = await env.app.inject({ method: 'GET', url, headers: { origin: EVIL, cookie } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('HEAD (the route Fastify derives from GET) keeps the dashboard policy', async () => {
    const evil = await env.app.inject({ method: 'HEAD', url: '/api/%70rojects', headers: { origin: EVIL, cookie } });
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    const dash = await env.app.inject({ method: 'HEAD', url: '/api/%70rojects', headers: { origin: DASH, cookie } });
    expect(dash.headers['access-control-allow-origin']).toBe(DASH);
  });

  it('an encoded form keeps the dashboard policy for the dashboard origin', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/%70rojects', headers: { origin: DASH, cookie } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(DASH);
  });
});

describe('preflights of dashboard routes', () => {
  const rotate = () => `/api/projects/${p.id}/api-key`;
  const forms = () => [rotate(), `/api/%70rojects/${p.id}/api-key`, `/api/projects/${p.id}/api%2Dkey`, `/%61pi/projects/${p.id}/api-key`];

  it('are never granted to a foreign origin, encoded or not', async () => {
    for (const url of forms()) {
      const res = await preflight(url, EVIL);
      expect(res.headers['access-control-allow-origin'], url).toBeUndefined();
      expect(res.headers['access-control-allow-methods'], url).toBeUndefined();
      expect(res.statusCode, url).toBe(404);
    }
  });

  it('are granted to the dashboard origin, encoded or not, with the fixed header list', async () => {
    for (const url of forms()) {
      const res = await preflight(url, DASH, 'POST', 'content-type, x-csrf-token, x-app-version');
      expect(res.statusCode, url).toBe(204);
      expect(res.headers['access-control-allow-origin'], url).toBe(DASH);
      expect(String(res.headers['access-control-allow-headers'])).toContain('x-csrf-token');
      expect(String(res.headers['access-control-allow-headers'])).not.toContain('x-app-version');
    }
  });

  it('a method the path does not serve is not granted', async () => {
    const res = await preflight(rotate(), DASH, 'DELETE');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a path no route serves gets no grant and a 404', async () => {
    const res = await preflight('/api/nothing-here', DASH);
    expect(res.statusCode).toBe(404);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('public routes', () => {
  it('preflights reflect the headers the app asks for (the SDK `headers` option)', async () => {
    const asked = 'x-api-key, content-type, authorization, x-app-version';
    const calls = [['/api/data/notes', 'POST'], ['/api/%64ata/notes', 'GET'], [`/api/data/notes/${'f'.repeat(24)}`, 'PATCH'], ['/api/userAuth/login', 'POST']];
    for (const [url, method] of calls) {
      const res = await preflight(url!, 'https://app.example.org', method, asked);
      expect(res.statusCode, url).toBe(204);
      expect(res.headers['access-control-allow-origin'], url).toBe('https://app.example.org');
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(res.headers['access-control-allow-headers']).toBe(asked);
    }
  });

  it('requests echo any origin with credentials', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/data/notes', headers: { origin: EVIL, ...p.pk, 'x-app-version': '1.2.3' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(EVIL);
  });
});

describe('routes of no surface', () => {
  it('the OpenAPI document grants no foreign origin, and its answer does not vary by origin', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/docs/json', headers: { origin: EVIL } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary ?? '').not.toContain('Origin');
  });

  it('a public response varies by origin even when the caller sent none (shared caches)', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/data/notes', headers: p.pk });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers.vary).toContain('Origin');
  });
});

describe('a node that serves only the public routes', () => {
  it('does not grant dashboard paths (they are not routed there)', async () => {
    const pub = await createTestEnv({ DASHBOARD_URL: DASH, PLINTH_ROUTES: 'public' });
    try {
      const res = await pub.app.inject({ method: 'OPTIONS', url: '/api/%70rojects', headers: { origin: DASH, 'access-control-request-method': 'GET' } });
      expect(res.statusCode).toBe(404);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await pub.close();
    }
  });
});
