/**
 * Threat: a route registered outside its authentication group serves callers it should not
 * (a dashboard route without the operator check, a mail route that takes a publishable key).
 * Every /api route carries the group it was registered in (`config.auth`, src/route-groups.ts);
 * this table says which group each part of the API belongs to, and a route registered with
 * its own hook instead of a group, or in the wrong group, fails here.
 */
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTableOf } from '../../src/plugins/route-table.js';
import type { AuthKind } from '../../src/route-groups.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

/** First match wins: [method or '*', URL pattern, the group it must be in]. */
const EXPECTED: Array<[string, RegExp, AuthKind]> = [
  ['*', /^\/api\/health$|^\/livez$|^\/readyz$/, 'public'],
  ['*', /^\/api\/auth\/(register|login|refresh-token|logout|csrf-token|send-otp|verify-otp|forgot-password|reset-password)$/, 'public'],
  ['*', /^\/api\/auth\/(me|change-password)$/, 'operator'],
  // The operator's own sessions; GitHub sign-in starts and returns with no session (its state is the credential).
  ['*', /^\/api\/auth\/sessions(\/revoke-others|\/:sessionId)?$/, 'operator'],
  // Linking GitHub starts signed in (a CSRF-checked POST); the operator's linked identities.
  ['POST', /^\/api\/auth\/github\/link$/, 'operator'],
  ['*', /^\/api\/auth\/identities(\/:provider)?$/, 'operator'],
  ['*', /^\/api\/auth\/github(\/start|\/callback)?$/, 'public'],
  ['POST', /^\/api\/auth\/mfa\/(verify|passkey\/options)$/, 'public'],
  ['POST', /^\/api\/auth\/passkeys\/signin(\/options)?$/, 'public'],
  ['*', /^\/api\/auth\/mfa\//, 'operator'],
  ['*', /^\/api\/admin\//, 'admin'],
  // An invitation link: read with its token alone; accepted signed in with the invited address.
  ['POST', /^\/api\/invitations\/lookup$/, 'public'],
  ['POST', /^\/api\/invitations\/accept$/, 'operator'],
  ['POST', /^\/api\/projects$/, 'verifiedOperator'],
  ['DELETE', /^\/api\/projects\/:projectId$/, 'verifiedOperator'],
  ['POST', /^\/api\/projects\/:projectId\/api-key$/, 'verifiedOperator'],
  ['*', /^\/api\/projects(\/|$)/, 'operator'],
  ['*', /^\/api\/user\//, 'operator'],
  ['*', /^\/api\/ai\//, 'operator'],
  ['*', /^\/api\/userAuth\/(me|update-profile|change-password)$/, 'endUser'],
  // A guest links an email; a user manages their own sessions; a guest links a social identity (start and finish).
  ['*', /^\/api\/userAuth\/(anonymous\/link-email|sessions(\/others|\/:sessionId)?|social\/:provider\/link(\/finish)?)$/, 'endUser'],
  // Second factors: managed by the signed-in user; a sign-in's challenge is completed with the key.
  ['*', /^\/api\/userAuth\/mfa\/(totp(\/enroll|\/confirm)?|recovery-codes|factors|step-up)$/, 'endUser'],
  ['*', /^\/api\/userAuth\/passkeys(\/register(\/options)?|\/:id)?$/, 'endUser'],
  ['*', /^\/api\/userAuth\/social\/:provider\/callback$/, 'public'],
  // User administration (list, get, create, update any field): the secret key only.
  ['*', /^\/api\/userAuth\/admin\//, 'secretKey'],
  ['*', /^\/api\/userAuth\//, 'apiKey'],
  ['*', /^\/api\/mail\/webhook/, 'public'],
  ['*', /^\/api\/mail\//, 'secretKey'],
  ['POST', /^\/api\/schemas$/, 'secretKey'],
  ['*', /^\/api\/schemas\//, 'apiKey'],
  ['*', /^\/api\/data(\/|$)/, 'apiKey'],
  // the stream's credential is its ticket (EventSource cannot send headers); tickets take the key
  ['*', /^\/api\/realtime$/, 'public'],
  ['POST', /^\/api\/realtime\/ticket$/, 'apiKey'],
  // Signed upload URLs and public file paths: the signature (or the public path) is the credential.
  ['*', /^\/api\/storage\/(objects|public|render)\//, 'public'],
  ['*', /^\/api\/storage\//, 'apiKey'],
  // A project's HTTP functions: its key names the project; the function decides the rest.
  ['*', /^\/api\/functions\//, 'apiKey'],
];

function routes(): Array<{ method: string; url: string; route: RouteOptions }> {
  return [...routeTableOf(env.app).values()].flatMap((e) => [...e.methods].map(([method, route]) => ({ method, url: e.url, route })));
}

function expectedGroup(method: string, url: string): AuthKind | undefined {
  return EXPECTED.find(([m, re]) => (m === '*' || m === method) && re.test(url))?.[2];
}

describe('route groups', () => {
  it('every /api route is registered in an authentication group', () => {
    const outside = routes()
      .filter((r) => r.url.startsWith('/api') && r.method !== 'OPTIONS' && !r.route.config?.auth)
      .map((r) => `${r.method} ${r.url}`);
    expect(outside).toEqual([]);
  });

  it('every /api route is in the group its part of the API requires', () => {
    const wrong = routes()
      .filter((r) => r.url.startsWith('/api') && r.method !== 'OPTIONS')
      .map((r) => ({ at: `${r.method} ${r.url}`, expected: expectedGroup(r.method, r.url) ?? 'unlisted', actual: r.route.config?.auth }))
      .filter((r) => r.expected !== r.actual);
    expect(wrong).toEqual([]);
  });

  it('routes declare no authentication hooks of their own: the group is the one place', () => {
    const own = routes()
      .filter((r) => r.url.startsWith('/api'))
      .filter((r) => [r.route.preValidation, r.route.onRequest].flat().some((h) => h && /require|Auth/i.test(h.name)))
      .map((r) => `${r.method} ${r.url}`);
    expect(own).toEqual([]);
  });

  it('the OpenAPI security of a route is its group\'s', () => {
    const operatorRoutes = routes().filter((r) => r.route.config?.auth === 'operator' && !r.route.schema?.hide);
    expect(operatorRoutes.length).toBeGreaterThan(20);
    for (const r of operatorRoutes) expect(r.route.schema?.security).toEqual([{ operatorBearer: [] }]);
    for (const r of routes().filter((x) => x.route.config?.auth === 'public')) expect(r.route.schema?.security).toBeUndefined();
  });

  it('an unauthenticated call is refused before its body is validated (401, not a schema error)', async () => {
    const cases = [
      { method: 'POST' as const, url: '/api/projects', payload: { name: 42 } },
      { method: 'POST' as const, url: '/api/mail/send', payload: { to: 7 } },
      { method: 'POST' as const, url: '/api/storage/upload-request', payload: { size: 'huge' } },
    ];
    for (const c of cases) {
      const res = await env.app.inject(c);
      expect([c.url, res.statusCode]).toEqual([c.url, 401]);
    }
  });
});
