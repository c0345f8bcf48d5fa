/**
 * Threat: guessing refresh-session ids. Ids used to be ObjectIds (time + per-process part +
 * counter, and x-request-id showed the counter), and a wrong secret for an existing id revoked
 * the victim's whole token family (forced logout) with a 403 that told which ids exist.
 * Now ids are random (128 bits), and a wrong secret answers exactly like an unknown id and
 * revokes nothing; only replaying a real, already rotated token revokes its family.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/lib/crypto.js';
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authProject, authTestEnv, refresh, signup } from './helpers.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ env, p } = await authTestEnv());
});
afterAll(() => env.close());

const JUNK = 'A'.repeat(43);
const idOf = (token: string) => token.split('.')[0]!;
const logout = (proj: TestProject, token: string) =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/logout', headers: { ...proj.pk, 'x-refresh-token': token } });
const bodyOf = (res: { statusCode: number; json(): unknown }) => ({ status: res.statusCode, body: res.json() });

describe('refresh-session ids', () => {
  it('are random 128-bit values: consecutive sessions share no time, process or counter part', async () => {
    const a = idOf((await signup(env, p)).body.data.refreshToken);
    const b = idOf((await signup(env, p)).body.data.refreshToken);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(b).toMatch(/^[0-9a-f]{32}$/);
    expect(a.slice(0, 8)).not.toBe(b.slice(0, 8)); // an ObjectId's time part
    expect(a.slice(8, 18)).not.toBe(b.slice(8, 18)); // an ObjectId's per-process part
  });
});

describe('a wrong secret for an existing id', () => {
  it('answers exactly like an unknown id (401, same code and message) and revokes nothing', async () => {
    const { body } = await signup(env, p);
    const victim = body.data.refreshToken as string;
    const unknown = bodyOf(await refresh(env, p, `${'f'.repeat(32)}.${JUNK}`));
    expect(unknown).toEqual({ status: 401, body: { success: false, data: {}, message: 'Refresh session not found', error: 'Refresh session not found', code: 'refresh_not_found' } });
    for (let i = 0; i < 5; i++) {
      expect(bodyOf(await refresh(env, p, `${idOf(victim)}.${JUNK.slice(0, 42)}${i}`))).toEqual(unknown);
    }
    const rows = await env.ctx.db.admin.selectFrom('app_user_sessions').select('revoked_at').where('user_id', '=', body.data.user._id).execute();
    expect(rows.every((r) => r.revoked_at === null)).toBe(true);
    expect((await refresh(env, p, victim)).statusCode).toBe(200);
  });

  it("of another project's session is not told apart from an unknown id either (refresh and logout)", async () => {
    const other = await authProject(env);
    const theirs = (await signup(env, other)).body.data.refreshToken as string;
    const forged = `${idOf(theirs)}.${JUNK}`;
    expect(bodyOf(await refresh(env, p, forged))).toMatchObject({ status: 401, body: { code: 'refresh_not_found' } });
    expect((await logout(p, forged)).statusCode).toBe(200);
    expect((await refresh(env, other, theirs)).statusCode).toBe(200);
  });

  it('at logout is ignored: the session stays live', async () => {
    const victim = (await signup(env, p)).body.data.refreshToken as string;
    expect((await logout(p, `${idOf(victim)}.${JUNK}`)).statusCode).toBe(200);
    expect((await refresh(env, p, victim)).statusCode).toBe(200);
  });
});

describe('what still revokes', () => {
  it('a replay of the real token after it rotated: 403 and the whole family is revoked', async () => {
    const first = (await signup(env, p)).body.data.refreshToken as string;
    const second = (await refresh(env, p, first)).json().data.refreshToken as string;
    const replay = await refresh(env, p, first);
    expect([replay.statusCode, replay.json().code]).toEqual([403, 'refresh_reused']);
    expect((await refresh(env, p, second)).statusCode).toBe(403);
  });
});

describe('sessions issued before the change (ObjectId ids)', () => {
  it('keep working and move to a random id at their next rotation', async () => {
    const { body } = await signup(env, p);
    const legacyId = 'a1b2c3d4e5f60718293a4b5c';
    const secret = 'L'.repeat(43);
    const now = env.clock.now();
    await env.ctx.db.admin.insertInto('app_user_sessions').values({
      id: legacyId, project_id: p.id, user_id: body.data.user._id, family_id: legacyId, token_hash: sha256Hex(secret),
      ip: null, user_agent: null, created_at: now, last_used_at: now, expires_at: new Date(now.getTime() + 3600_000),
    }).execute();
    const res = await refresh(env, p, `${legacyId}.${secret}`);
    expect(res.statusCode).toBe(200);
    expect(idOf(res.json().data.refreshToken)).toMatch(/^[0-9a-f]{32}$/);
  });
});
