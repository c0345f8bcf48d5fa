/**
 * Threat: a client's malformed request crashing a handler (a 500, a half-written row). Every
 * route in the OpenAPI document is called with junk path parameters and hostile bodies, with
 * each kind of credential; none may answer 500, and every error keeps the envelope.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeProject, USERS_FIELDS, type TestProject } from '../helpers/fixtures.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '0' }); // let every call reach its handler
  p = await makeProject(env.ctx);
  await makeCollection(env.ctx, p.id, 'users', USERS_FIELDS);
  await makeCollection(env.ctx, p.id, 'notes', [{ key: 'n', type: 'Number', unique: true }]);
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
