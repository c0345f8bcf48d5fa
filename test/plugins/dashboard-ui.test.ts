/**
 * Serving the console: /_/ with a strict CSP (no inline script or style), hashed assets
 * cached for a year, index.html revalidated, the build's metafile not served; `/` sends a
 * browser to the console and keeps its JSON for API clients; DASHBOARD=off and a public-only
 * node serve none of it. (Global setup builds dist/ui, as `npm run build` does.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';

const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('console served at /_/', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv();
  });
  afterAll(() => env.close());

  it('answers index.html no-cache with a strict CSP, and hashed assets immutable', async () => {
    const index = await env.app.inject({ method: 'GET', url: '/_/' });
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-type']).toContain('text/html');
    expect(index.headers['cache-control']).toBe('no-cache');
    const csp = String(index.headers['content-security-policy']);
    for (const d of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"]) expect(csp).toContain(d);
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    expect(index.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|\sstyle=|<style/);
    for (const asset of index.body.match(/(?:src|href)="\.\/(assets\/[^"]+)"/g)!.map((m) => m.split('./')[1]!.slice(0, -1))) {
      const res = await env.app.inject({ method: 'GET', url: `/_/${asset}` });
      expect(res.statusCode, asset).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    expect((await env.app.inject({ method: 'GET', url: '/_/meta.json' })).statusCode).toBe(404);
    expect((await env.app.inject({ method: 'GET', url: '/_/../package.json' })).statusCode).toBe(404);
  });

  it('sends a browser from / to /_/; API clients keep the JSON', async () => {
    const browser = await env.app.inject({ method: 'GET', url: '/', headers: html });
    expect(browser.statusCode).toBe(302);
    expect(browser.headers.location).toBe('/_/');
    for (const accept of ['application/json', '*/*', undefined]) {
      const api = await env.app.inject({ method: 'GET', url: '/', headers: accept ? { accept } : {} });
      expect(api.statusCode, String(accept)).toBe(200);
      expect(api.json()).toEqual({ status: 'success', message: 'Plinth API is running' });
    }
  });

  it('names the storage origin the console uploads to in connect-src', async () => {
    const index = await env.app.inject({ method: 'GET', url: '/_/' });
    expect(String(index.headers['content-security-policy'])).toContain(`connect-src 'self' ${new URL(env.config.publicUrl).origin}`);
  });
});

describe('console switched off', () => {
  it.each([[{ DASHBOARD: 'off' }], [{ PLINTH_ROUTES: 'public' }]])('%j: no /_/, and / stays JSON for browsers', async (vars) => {
    const env = await createTestEnv(vars);
    try {
      expect((await env.app.inject({ method: 'GET', url: '/_/' })).statusCode).toBe(404);
      const root = await env.app.inject({ method: 'GET', url: '/', headers: html });
      expect(root.statusCode).toBe(200);
      expect(root.json().status).toBe('success');
    } finally {
      await env.close();
    }
  });

  it('DASHBOARD takes on/off/true/false and refuses anything else', () => {
    const base = { PLINTH_DATA_DIR: '/tmp/plinth-config-dashboard', NODE_ENV: 'test' };
    expect(loadConfig({ ...base }).dashboard).toBe(true);
    expect(loadConfig({ ...base, DASHBOARD: 'off' }).dashboard).toBe(false);
    expect(loadConfig({ ...base, DASHBOARD: 'on' }).dashboard).toBe(true);
    expect(() => loadConfig({ ...base, DASHBOARD: 'maybe' })).toThrow(/DASHBOARD/);
  });
});
