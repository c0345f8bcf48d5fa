/**
 * Threat: two end users with one username. A `users` schema may declare fields unique (e.g.
 * `username`), but nothing enforced it: a second sign-up or a profile update took an existing
 * username, and /public/:username then answered either user. Unique users fields are now
 * enforced by a real unique index (one shared index over per-project values, kept by a
 * trigger): 409 on conflict, race-free, built and dropped when the users schema changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FieldDef } from '../../../src/db/types.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { captureMail, PASSWORD, uniqueEmail } from './helpers.js';

let env: TestEnv;

const FIELDS: FieldDef[] = [
  { key: 'email', type: 'String', required: true, unique: true },
  { key: 'password', type: 'String', required: true },
  { key: 'username', type: 'String', unique: true },
  { key: 'badge', type: 'Number', unique: true },
  { key: 'name', type: 'String' },
];

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  captureMail(env);
});
afterAll(() => env.close());

/** A project whose users collection is created through the dashboard API (the real path). */
async function project(fields: FieldDef[] = FIELDS): Promise<TestProject> {
  const p = await makeProject(env.ctx);
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name: 'users', schema: fields } });
  expect(res.statusCode).toBe(201);
  return p;
}

const setSchema = (p: TestProject, fields: FieldDef[]) =>
  env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/users`, headers: p.owner.auth, payload: { schema: fields } });
const signup = (p: TestProject, body: Record<string, unknown>) =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: { ...p.pk, 'x-refresh-token-mode': 'header' }, payload: { email: uniqueEmail(), password: PASSWORD, ...body } });
const update = (p: TestProject, token: string, body: Record<string, unknown>) =>
  env.app.inject({ method: 'PUT', url: '/api/userAuth/update-profile', headers: { ...p.pk, authorization: `Bearer ${token}` }, payload: body });
const publicProfile = (p: TestProject, username: string) => env.app.inject({ method: 'GET', url: `/api/userAuth/public/${username}`, headers: p.pk });

describe('a unique field of the users schema', () => {
  it('a second sign-up with the same username is 409, naming the field', async () => {
    const p = await project();
    expect((await signup(p, { username: 'bob' })).statusCode).toBe(201);
    const again = await signup(p, { username: 'bob' });
    expect([again.statusCode, again.json().code, again.json().message]).toEqual([409, 'field_taken', 'User already exists with this username.']);
    const numbers = await signup(p, { username: 'bob2', badge: 7 });
    expect(numbers.statusCode).toBe(201);
    expect((await signup(p, { username: 'bob3', badge: 7.0 })).statusCode).toBe(409);
    const users = await env.ctx.db.admin.selectFrom('app_users').select('id').where('project_id', '=', p.id).execute();
    expect(users).toHaveLength(2);
  });

  it('a profile update cannot take an existing username; /public/:username answers its one owner', async () => {
    const p = await project();
    const alice = (await signup(p, { username: 'alice' })).json().data;
    const mallory = (await signup(p, { username: 'mallory' })).json().data;
    const steal = await update(p, mallory.accessToken, { username: 'alice' });
    expect([steal.statusCode, steal.json().code]).toEqual([409, 'field_taken']);
    const pub = await publicProfile(p, 'alice');
    expect(pub.json().data._id).toBe(alice.user._id);
    // Keeping one's own value, or changing other fields, is fine; a freed value can be taken.
    expect((await update(p, alice.accessToken, { username: 'alice', name: 'Alice' })).statusCode).toBe(200);
    expect((await update(p, alice.accessToken, { username: 'alice2' })).statusCode).toBe(200);
    expect((await update(p, mallory.accessToken, { username: 'alice' })).statusCode).toBe(200);
    expect((await publicProfile(p, 'alice')).json().data._id).toBe(mallory.user._id);
  });

  it('a very long value is a 201 or a 409 like any other, never a 500', async () => {
    const p = await project([...FIELDS, { key: 'bio', type: 'String', unique: true }]);
    const bio = 'x'.repeat(9000) + Math.random();
    expect((await signup(p, { username: 'long1', bio })).statusCode).toBe(201);
    const again = await signup(p, { username: 'long2', bio });
    expect([again.statusCode, again.json().message]).toEqual([409, 'User already exists with this bio.']);
  });

  it('is per project: another project may use the same username', async () => {
    const a = await project();
    const b = await project();
    expect((await signup(a, { username: 'same' })).statusCode).toBe(201);
    expect((await signup(b, { username: 'same' })).statusCode).toBe(201);
  });

  it('race-free: concurrent sign-ups with one username → exactly one 201, the others 409', async () => {
    const p = await project();
    const results = await Promise.all(Array.from({ length: 8 }, () => signup(p, { username: 'racer' })));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
  });

  it('a derived username (required, not given) that is taken gets a suffix instead of a 409', async () => {
    const p = await project([
      { key: 'email', type: 'String', required: true, unique: true },
      { key: 'password', type: 'String', required: true },
      { key: 'username', type: 'String', required: true, unique: true },
    ]);
    const first = await signup(p, { email: 'ann@one.example' });
    const second = await signup(p, { email: 'ann@two.example' });
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect(first.json().data.user.username).toBe('ann');
    expect(second.json().data.user.username).toMatch(/^ann-[0-9a-f]{4}$/);
  });
});

describe('schema changes', () => {
  it('making a field unique over existing duplicates is 409; dropping unique frees it; re-adding enforces again', async () => {
    const plain = FIELDS.map((f) => (f.key === 'username' ? { ...f, unique: false } : f));
    const p = await project(plain);
    expect((await signup(p, { username: 'twin' })).statusCode).toBe(201);
    expect((await signup(p, { username: 'twin' })).statusCode).toBe(201);
    const refused = await setSchema(p, FIELDS);
    expect([refused.statusCode, refused.json().code]).toEqual([409, 'unique_duplicates']);
    await env.ctx.db.admin.updateTable('app_users').set({ data: JSON.stringify({ username: 'twin-b' }) as never })
      .where('project_id', '=', p.id).where(({ eb, selectFrom }) => eb('id', '=', selectFrom('app_users').select('id').where('project_id', '=', p.id).orderBy('created_at', 'desc').limit(1))).execute();
    expect((await setSchema(p, FIELDS)).statusCode).toBe(200);
    expect((await signup(p, { username: 'twin' })).statusCode).toBe(409);
    expect((await setSchema(p, plain)).statusCode).toBe(200);
    expect((await signup(p, { username: 'twin' })).statusCode).toBe(201);
  });

  it('deleting the users collection drops the unique values with it', async () => {
    const p = await project();
    expect((await signup(p, { username: 'gone' })).statusCode).toBe(201);
    const del = await env.app.inject({ method: 'DELETE', url: `/api/projects/${p.id}/collections/users`, headers: p.owner.auth });
    expect(del.statusCode).toBe(200);
    const left = await env.ctx.db.admin.selectFrom('app_user_unique_fields').select('field').where('project_id', '=', p.id).execute();
    expect(left).toEqual([]);
  });
});
