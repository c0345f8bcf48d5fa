/**
 * Bad input: PostgreSQL text and jsonb cannot hold U+0000, so a NUL character anywhere in the
 * input of the auth routes (body, path, query) is a 400, never a 500, and stores nothing
 * (the error handler maps PostgreSQL's refusal, src/plugins/errors.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authTestEnv, PASSWORD, signup, uniqueEmail } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ env, p } = await authTestEnv());
});
afterAll(() => env.close());

const post = (url: string, payload: Record<string, unknown>) => env.app.inject({ method: 'POST', url, headers: p.pk, payload });

describe('NUL characters in auth input', () => {
  it.each([
    ['/api/userAuth/signup', { email: 'nul\u0000@example.com', password: PASSWORD }],
    ['/api/userAuth/signup', { email: uniqueEmail(), password: PASSWORD, name: 'a\u0000b' }],
    ['/api/userAuth/signup', { email: uniqueEmail(), password: PASSWORD, ['k\u0000']: 'v' }],
    ['/api/userAuth/login', { email: 'nul\u0000@example.com', password: PASSWORD }],
    ['/api/userAuth/request-password-reset', { email: 'nul\u0000@example.com' }],
  ])('POST %s %j → 400', async (url, payload) => {
    const res = await post(url, payload);
    expect([res.statusCode, res.json().code]).toEqual([400, 'validation_failed']);
  });

  it('update-profile and the public profile path → 400; nothing is stored', async () => {
    const { body } = await signup(env, p, { name: 'Clean' });
    const res = await env.app.inject({
      method: 'PUT', url: '/api/userAuth/update-profile', headers: { ...p.pk, authorization: `Bearer ${body.data.accessToken}` }, payload: { name: 'x\u0000' },
    });
    expect(res.statusCode).toBe(400);
    const row = await env.ctx.db.admin.selectFrom('app_users').select('data').where('id', '=', body.data.user._id).executeTakeFirstOrThrow();
    expect(row.data).toMatchObject({ name: 'Clean' });
    expect((await env.app.inject({ method: 'GET', url: '/api/userAuth/public/ab%00cd', headers: p.pk })).statusCode).toBe(400);
  });

  it('dashboard session path → 400', async () => {
    const { body } = await signup(env, p);
    const url = `/api/projects/${p.id}/users/${body.data.user._id}/sessions/a%00b`;
    expect((await env.app.inject({ method: 'DELETE', url, headers: p.owner.auth })).statusCode).toBe(400);
  });
});
