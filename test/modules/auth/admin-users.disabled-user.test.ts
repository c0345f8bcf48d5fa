/**
 * Threat: a user the operator disabled keeps using the app. A disabled user cannot log in,
 * cannot refresh (their sessions are revoked, and the rotation statement itself refuses them)
 * and cannot start a session any other way; enabling them again restores login. Also: the
 * dashboard's user search and verify, and that another operator reaches none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { makeOperator, type TestProject } from '../../helpers/fixtures.js';
import { authTestEnv, PASSWORD, refresh, signup } from './helpers.js';
import { startSession } from '../../../src/modules/auth/sessions.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ env, p } = await authTestEnv());
});
afterAll(() => env.close());

const op = (method: 'GET' | 'POST', url: string, auth = p.owner.auth) => env.app.inject({ method, url, headers: auth, ...(method === 'POST' ? { payload: {} } : {}) });
const login = (email: string) =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: { ...p.pk, 'x-refresh-token-mode': 'header' }, payload: { email, password: PASSWORD } });

describe('disable', () => {
  it('stops login and refresh at once; enable restores login', async () => {
    const { body } = await signup(env, p);
    const { _id: userId, email } = body.data.user;
    const token = body.data.refreshToken;
    const res = await op('POST', `/api/projects/${p.id}/users/${userId}/disable`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ userId, disabled: true });
    const denied = await login(email);
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('user_disabled');
    const wrongPassword = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: p.pk, payload: { email, password: 'not the password' } });
    expect(wrongPassword.statusCode).toBe(401); // nothing about the account without its password
    expect((await refresh(env, p, token)).statusCode).toBe(403);
    const listed = await op('GET', `/api/projects/${p.id}/users?q=${encodeURIComponent(email)}`);
    expect(listed.json().data.items[0]).toMatchObject({ _id: userId, disabled: true });
    expect((await op('GET', `/api/projects/${p.id}/users/${userId}/sessions`)).json().data.sessions).toEqual([]);

    expect((await op('POST', `/api/projects/${p.id}/users/${userId}/enable`)).statusCode).toBe(200);
    expect((await login(email)).statusCode).toBe(200);
  });

  it('a session that slipped in before the disable cannot be refreshed, and no new one can start', async () => {
    const { body } = await signup(env, p);
    const userId = body.data.user._id;
    // Disable without the session revocation, as a login racing the disable would leave it.
    await env.ctx.db.admin.updateTable('app_users').set({ disabled_at: new Date() }).where('id', '=', userId).execute();
    const r = await refresh(env, p, body.data.refreshToken);
    expect(r.statusCode).toBe(403);
    expect(r.json().code).toBe('user_disabled');
    const project = (await env.ctx.projects.byId(p.id))!;
    await expect(
      env.ctx.db.tenant({ projectId: p.id, keyKind: 'publishable' }, (tx) => startSession(env.ctx, tx, project, userId, { ip: null, userAgent: null })),
    ).rejects.toMatchObject({ code: 'user_disabled' });
  });
});

describe('search and verify', () => {
  it('finds users by part of the email, by name and by id; LIKE wildcards are literal', async () => {
    const a = (await signup(env, p, { email: 'findme_special@example.com', name: 'Ada Lovelace' })).body.data.user;
    await signup(env, p, { email: 'other@example.com', name: 'Bob' });
    const q = async (text: string) => (await op('GET', `/api/projects/${p.id}/users?q=${encodeURIComponent(text)}`)).json().data;
    expect((await q('findme_')).items.map((u: { _id: string }) => u._id)).toEqual([a._id]);
    expect((await q('LOVELACE')).items.map((u: { _id: string }) => u._id)).toEqual([a._id]);
    expect((await q(a._id)).items.map((u: { _id: string }) => u._id)).toEqual([a._id]);
    expect((await q('%')).total).toBe(0);
    expect((await q('nobody-matches')).total).toBe(0);
  });

  it('marks a user verified', async () => {
    const u = (await signup(env, p)).body.data.user;
    expect(u.emailVerified).toBe(false);
    expect((await op('POST', `/api/projects/${p.id}/users/${u._id}/verify`)).statusCode).toBe(200);
    const listed = await op('GET', `/api/projects/${p.id}/users?q=${u._id}`);
    expect(listed.json().data.items[0].emailVerified).toBe(true);
  });

  it('another operator gets 404 on verify, disable and enable, and nothing changes', async () => {
    const u = (await signup(env, p)).body.data.user;
    const stranger = await makeOperator(env.ctx);
    for (const action of ['verify', 'disable', 'enable']) {
      const res = await op('POST', `/api/projects/${p.id}/users/${u._id}/${action}`, stranger.auth);
      expect(res.statusCode, action).toBe(404);
    }
    expect((await login(u.email)).statusCode).toBe(200);
    const row = await env.ctx.db.admin.selectFrom('app_users').select(['email_verified', 'disabled_at']).where('id', '=', u._id).executeTakeFirstOrThrow();
    expect(row).toEqual({ email_verified: false, disabled_at: null });
  });
});
