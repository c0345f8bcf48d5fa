/** Operators manage a project's end users and sessions (docs/wire-compatibility.md §10.10). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { makeOperator, type TestProject } from '../../helpers/fixtures.js';
import { authTestEnv, PASSWORD, refresh, signup } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ env, p } = await authTestEnv());
});
afterAll(() => env.close());

const call = (method: 'GET' | 'DELETE', url: string, auth = p.owner.auth) => env.app.inject({ method, url, headers: auth });

describe('dashboard: project users', () => {
  it('lists users newest first, paged, without passwords', async () => {
    for (let i = 0; i < 3; i++) {
      await signup(env, p, { name: `U${i}` });
      env.clock.advance(1000);
    }
    const res = await call('GET', `/api/projects/${p.id}/users?page=1&limit=2`);
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ total: 3, page: 1, limit: 2 });
    expect(data.items).toHaveLength(2);
    expect(data.items[0].name).toBe('U2');
    expect(JSON.stringify(data)).not.toMatch(/password|argon2/);
  });

  it("another operator gets 404 for the project", async () => {
    const stranger = await makeOperator(env.ctx);
    expect((await call('GET', `/api/projects/${p.id}/users`, stranger.auth)).statusCode).toBe(404);
  });

  it('shows live sessions and revokes one (its whole chain) or all', async () => {
    const { body } = await signup(env, p);
    const userId = body.data.user._id;
    const rotated = (await refresh(env, p, body.data.refreshToken)).json().data.refreshToken;
    const login2 = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: { ...p.pk, 'x-refresh-token-mode': 'header' }, payload: { email: body.data.user.email, password: PASSWORD } });
    const second = login2.json().data.refreshToken;
    const list = await call('GET', `/api/projects/${p.id}/users/${userId}/sessions`);
    expect(list.statusCode).toBe(200);
    const sessions = list.json().data.sessions;
    expect(sessions).toHaveLength(2);
    expect(sessions.map((s: { id: string }) => s.id).sort()).toEqual([rotated.split('.')[0], second.split('.')[0]].sort());
    const one = await call('DELETE', `/api/projects/${p.id}/users/${userId}/sessions/${rotated.split('.')[0]}`);
    expect(one.statusCode).toBe(200);
    expect((await refresh(env, p, rotated)).statusCode).toBe(403);
    const all = await call('DELETE', `/api/projects/${p.id}/users/${userId}/sessions`);
    expect(all.statusCode).toBe(200);
    expect((await refresh(env, p, second)).statusCode).toBe(403);
    expect((await call('GET', `/api/projects/${p.id}/users/${userId}/sessions`)).json().data.sessions).toEqual([]);
    expect((await call('DELETE', `/api/projects/${p.id}/users/${userId}/sessions/${'f'.repeat(24)}`)).statusCode).toBe(404);
  });

  it('deletes a user with their sessions; unknown users are 404', async () => {
    const { body } = await signup(env, p);
    const userId = body.data.user._id;
    expect((await call('DELETE', `/api/projects/${p.id}/users/${userId}`)).statusCode).toBe(200);
    expect((await env.ctx.db.admin.selectFrom('app_user_sessions').select('id').where('user_id', '=', userId).execute())).toEqual([]);
    expect((await refresh(env, p, body.data.refreshToken)).statusCode).toBe(401);
    expect((await call('DELETE', `/api/projects/${p.id}/users/${userId}`)).statusCode).toBe(404);
    expect((await call('GET', `/api/projects/${p.id}/users/not-an-id/sessions`)).statusCode).toBe(400);
  });

  it("another user's session under this user's path is 404 and stays live", async () => {
    const { body: a } = await signup(env, p);
    const { body: b } = await signup(env, p);
    const theirs = b.data.refreshToken.split('.')[0];
    expect((await call('DELETE', `/api/projects/${p.id}/users/${a.data.user._id}/sessions/${theirs}`)).statusCode).toBe(404);
    expect((await refresh(env, p, b.data.refreshToken)).statusCode).toBe(200);
  });

  it('malformed session ids are 404 and out-of-range pages 400, not 500', async () => {
    const { body } = await signup(env, p);
    const userId = body.data.user._id;
    expect((await call('DELETE', `/api/projects/${p.id}/users/${userId}/sessions/not-an-id`)).statusCode).toBe(404);
    expect((await call('GET', `/api/projects/${p.id}/users?page=1e300`)).statusCode).toBe(400);
  });
});
