/**
 * Threat: a client crashing request handling (a 500, a stack overflow in validation, in
 * JSON.stringify or in PostgreSQL's jsonb input) with JSON nested thousands of levels deep.
 * One guard bounds the nesting of every JSON body (and cursor): 400 `json_too_deep`, whichever
 * route; nesting inside strings does not count, and the documented depth is accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/lib/json-depth.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeProject, makeUserToken, USERS_FIELDS, type TestProject } from '../helpers/fixtures.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  p = await makeProject(env.ctx);
  await makeCollection(env.ctx, p.id, 'users', USERS_FIELDS);
  await makeCollection(env.ctx, p.id, 'notes');
});
afterAll(() => env.close());

/** `{"a":{"a":…1…}}` with `levels` objects. */
const nested = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
const json = { 'content-type': 'application/json' };

describe('JSON nested 5 000 levels deep', () => {
  it('sign-up with a deep custom field is 400 json_too_deep', async () => {
    const payload = `{"email":"deep@example.com","password":"long enough 1","custom":${nested(5000)}}`;
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: { ...p.pk, ...json }, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ success: false, code: 'json_too_deep' });
    const rows = await env.ctx.db.admin.selectFrom('app_users').select('id').where('project_id', '=', p.id).execute();
    expect(rows).toEqual([]);
  });

  it('a profile update with a deep custom field is 400 json_too_deep', async () => {
    const signup = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: p.pk, payload: { email: 'ok@example.com', password: 'long enough 1' } });
    expect(signup.statusCode).toBe(201);
    const token = await makeUserToken(env.ctx, p, signup.json().data.user._id);
    const res = await env.app.inject({
      method: 'PUT', url: '/api/userAuth/update-profile', headers: { ...p.pk, ...json, authorization: `Bearer ${token}` }, payload: `{"custom":${nested(5000)}}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('json_too_deep');
  });

  it.each([
    ['POST', '/api/data/notes', 'sk'],
    ['POST', '/api/mail/send', 'sk'],
    ['POST', '/api/schemas', 'sk'],
    ['POST', '/api/projects', 'operator'],
    ['PATCH', '/api/projects/{id}', 'operator'],
    ['POST', '/api/projects/{id}/ai/query-builder', 'operator'],
    ['POST', '/api/auth/login', 'none'],
  ])('%s %s is 400 json_too_deep', async (method, url, cred) => {
    const headers = cred === 'sk' ? p.sk : cred === 'operator' ? p.owner.auth : {};
    const res = await env.app.inject({
      method: method as 'POST', url: url.replace('{id}', p.id), headers: { ...headers, ...json }, payload: `{"x":${nested(5000)}}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('json_too_deep');
  });

  it('arrays count as well as objects', async () => {
    const payload = '['.repeat(5000) + ']'.repeat(5000);
    const res = await env.app.inject({ method: 'POST', url: '/api/data/notes/bulk', headers: { ...p.sk, ...json }, payload });
    expect(res.json().code).toBe('json_too_deep');
  });

  it('a keyset cursor carrying deep JSON starts from the first page instead of failing', async () => {
    const cursor = Buffer.from(JSON.stringify({ v: '['.repeat(5000) + ']'.repeat(5000), id: 'f'.repeat(24) })).toString('base64url');
    const res = await env.app.inject({ method: 'GET', url: `/api/data/notes?sort=anything&cursor=${cursor}`, headers: p.sk });
    expect(res.statusCode).toBe(200);
  });
});

describe('what stays accepted', () => {
  it(`a document nested ${MAX_JSON_DEPTH} levels deep (the body is one of them)`, async () => {
    const res = await env.app.inject({ method: 'POST', url: '/api/data/notes', headers: { ...p.sk, ...json }, payload: nested(MAX_JSON_DEPTH) });
    expect(res.statusCode).toBe(201);
    const deeper = await env.app.inject({ method: 'POST', url: '/api/data/notes', headers: { ...p.sk, ...json }, payload: nested(MAX_JSON_DEPTH + 1) });
    expect(deeper.json().code).toBe('json_too_deep');
  });

  it('brackets inside strings do not count', async () => {
    const res = await env.app.inject({
      method: 'POST', url: '/api/data/notes', headers: { ...p.sk, ...json }, payload: JSON.stringify({ text: '{['.repeat(5000) + '\\"]' }),
    });
    expect(res.statusCode).toBe(201);
  });
});
