/**
 * Threat: a client's malformed request crashing a handler (a 500, a half-written row). Every
 * route in the OpenAPI document is called with junk path parameters and hostile bodies, with
 * each kind of credential; then every route the app registers (hidden ones included, from the
 * route table) with inherited property names (`__proto__`, `constructor`...) as parameters,
 * query keys and body keys, JSON nested 5 000 levels, JSON near the body limit and wrong
 * types. None may answer 5xx, and every error keeps the envelope.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { routesOf } from '../../src/plugins/route-table.js';
import { makeCollection, makeProject, makeUserToken, USERS_FIELDS, type TestProject } from '../helpers/fixtures.js';

let env: TestEnv;
let p: TestProject;
let userAuth: Record<string, string>;

beforeAll(async () => {
  // RATE_LIMIT_SCALE 0: every call reaches its handler. BODY_LIMIT 64 KiB: the bodies near the
  // limit are as near it as at the default 1 MiB, in a sixteenth of the bytes per request
  // (~2 700 of them): what is tested is the limit's edge, not the megabyte.
  env = await createTestEnv({ RATE_LIMIT_SCALE: '0', BODY_LIMIT: String(64 * 1024) });
  p = await makeProject(env.ctx);
  await makeCollection(env.ctx, p.id, 'users', USERS_FIELDS);
  await makeCollection(env.ctx, p.id, 'notes', [{ key: 'n', type: 'Number', unique: true }]);
  const signup = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: p.pk, payload: { email: 'sweep@example.com', password: 'long enough 1' } });
  userAuth = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, signup.json().data.user._id)}` };
});
afterAll(() => env.close());

const PARAM_VALUES = ['notes', "x' OR 1=1--", '%2e%2e%2f', 'ffffffffffffffffffffffff', '__proto__'];
const BODIES: unknown[] = [
  undefined,
  {},
  [],
  'just a string',
  12345,
  { a: { b: { c: { d: { e: { f: { g: { h: 1 } } } } } } } },
  { email: 42, password: ['x'], name: { $ne: null }, to: {}, size: -1, filePath: '../../etc/passwd', aiKey: 7, keyType: null },
  [{ n: 'not a number' }, null],
  { 'a.b.c': 1, $set: { x: 1 }, constructor: { prototype: {} } },
];

function fill(path: string, value: string): string {
  return path.replace(/\{[^}]+\}/g, encodeURIComponent(value));
}

describe('no route answers 500 to bad input', () => {
  it('holds for every documented route, body and credential', async () => {
    const doc = (await env.app.inject({ method: 'GET', url: '/docs/json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const credentials = [p.sk, p.pk, p.owner.auth, {}];
    const failures: string[] = [];
    let calls = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        if (path.includes('webhook')) continue; // signature-verified: covered by the mail tests
        for (const value of PARAM_VALUES) {
          for (const headers of credentials) {
            for (const body of method === 'get' || method === 'head' ? [undefined] : BODIES) {
              const url = fill(path, value).replace('/notes/notes', '/notes/ffffffffffffffffffffffff');
              const res = await env.app.inject({
                method: method.toUpperCase() as 'GET',
                url: `${url}?limit=abc&sort=%24where&price_gt=x&n_regex=(((`,
                headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
                ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
              });
              calls++;
              if (res.statusCode === 500) failures.push(`${method.toUpperCase()} ${url} ${JSON.stringify(body)} → ${res.body.slice(0, 200)}`);
              if (res.statusCode >= 400 && method !== 'head') {
                let b: { success?: boolean; message?: unknown } = {};
                try {
                  b = res.json();
                } catch {
                  /* not JSON: reported below */
                }
                if (b.success !== false || typeof b.message !== 'string') {
                  failures.push(`${method.toUpperCase()} ${url} → ${res.statusCode}: error without envelope ${JSON.stringify(res.body.slice(0, 120))}`);
                }
              }
            }
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(1000); // ~70 routes × 5 params × 4 credentials × bodies
    expect(failures).toEqual([]);
  }, 240_000);
});

const INHERITED = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];
const ID = 'f'.repeat(24);

interface Case {
  param: string;
  query: string;
  /** Raw JSON text (undefined: no body). */
  body?: string;
  /** Big bodies are parsed before any credential is looked at: two credentials are enough. */
  big?: boolean;
}

function cases(bodyLimit: number, withBody: boolean): Case[] {
  const q = (n: string) => encodeURIComponent(n);
  // Each name as every path parameter, and (with an existing collection as the parameter, so
  // the query reaches its grammar) as query keys and values.
  const sweep = INHERITED.flatMap((n): Case[] => [
    {
      param: n,
      query: '',
      body: withBody ? `{${JSON.stringify(n)}:{${JSON.stringify(n)}:1},"name":${JSON.stringify(n)},"key":${JSON.stringify(n)},"type":${JSON.stringify(n)}}` : undefined,
    },
    { param: 'notes', query: `${q(n)}=1&sort=${q(n)}&fields=${q(n)}&populate=${q(n)}&${q(n)}_gt=1&${q(n)}.a=1` },
  ]);
  if (!withBody) return sweep;
  const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
  const filler = 'x'.repeat(bodyLimit - 200);
  const huge = `{"email":"a@b.co","password":"long enough 1","name":"${filler}"}`;
  const manyItems = '[' + Array.from({ length: Math.floor((bodyLimit - 200) / 8) }, () => '{"n":1}').join(',') + ']';
  const wrongTypes = JSON.stringify({
    email: [], password: {}, name: 1, size: 'big', to: 5, filePath: [], path: {}, schema: 'x', fields: 'x', plan: [], settings: 1,
    filename: { a: 1 }, contentType: [1], templateName: {}, variables: 'x', prompt: [], collection: 9, enabled: 'yes', keyType: 3,
  });
  return [
    ...sweep,
    { param: ID, query: '', body: deep, big: true },
    { param: ID, query: '', body: huge, big: true },
    { param: ID, query: '', body: manyItems, big: true },
    { param: ID, query: 'limit=-1&page=x&sort=%00', body: wrongTypes },
    { param: ID, query: '', body: '"a string"' },
    { param: ID, query: '', body: 'null' },
  ];
}

describe('no registered route answers 5xx to hostile input', () => {
  it('holds for every route of the route table (hidden ones included)', async () => {
    const routes = routesOf(env.app);
    expect(routes.length).toBeGreaterThan(100);
    const credentials = [p.sk, userAuth, p.owner.auth, {}];
    const failures: string[] = [];
    let calls = 0;
    for (const { method, url } of routes) {
      const withBody = !['GET', 'HEAD', 'OPTIONS'].includes(method);
      for (const c of cases(env.config.bodyLimit, withBody)) {
        const path = url.replace(/:[^/]+/g, encodeURIComponent(c.param)).replace('*', `${encodeURIComponent(c.param)}/${encodeURIComponent(c.param)}`);
        for (const headers of c.big ? credentials.slice(0, 3) : credentials) {
          const res = await env.app.inject({
            method: method as 'GET',
            url: c.query ? `${path}?${c.query}` : path,
            headers: { ...headers, ...(c.body === undefined ? {} : { 'content-type': 'application/json' }) },
            ...(c.body === undefined ? {} : { payload: c.body }),
          });
          calls++;
          const label = `${method} ${path}?${c.query} ${(c.body ?? '').slice(0, 60)}`;
          if (res.statusCode >= 500) failures.push(`${label} → ${res.statusCode} ${res.body.slice(0, 160)}`);
          else if (res.statusCode >= 400 && method !== 'HEAD') {
            let b: { success?: boolean; message?: unknown } = {};
            try {
              b = res.json();
            } catch {
              /* reported below */
            }
            if (b.success !== false || typeof b.message !== 'string') failures.push(`${label} → ${res.statusCode} without envelope: ${res.body.slice(0, 100)}`);
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(2000);
    expect(failures).toEqual([]);
  }, 400_000);
});

