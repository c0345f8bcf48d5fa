/**
 * Threat: a half-made account. Sign-up writes the user, its first session, its verification
 * code and its verification mail; a failure in any of them must leave none behind (an account
 * without its mail could never be verified, and its email would stay taken), and a refused
 * sign-up (email or unique field taken) must write nothing at all. Real PostgreSQL, real mailer
 * (the dev outbox).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mailer } from '../../../src/context.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, USERS_FIELDS, type TestProject } from '../../helpers/fixtures.js';
import { PASSWORD, uniqueEmail } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let realMailer: Mailer;

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  realMailer = env.ctx.mailer;
  p = await makeProject(env.ctx);
  // Through the dashboard API, the path that records the unique fields.
  const schema = [...USERS_FIELDS, { key: 'handle', type: 'String', unique: true }];
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name: 'users', schema } });
  expect(res.statusCode).toBe(201);
});
afterAll(() => env.close());

const signup = (payload: Record<string, unknown>) =>
  env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: p.pk, payload: { password: PASSWORD, ...payload } });

/** Rows of the project's accounts, sessions, codes and queued verification mails. */
async function counts() {
  const { rows } = await sql<{ users: number; sessions: number; otps: number; mails: number }>`
    SELECT (SELECT count(*) FROM app_users WHERE project_id = ${p.id})::int AS users,
           (SELECT count(*) FROM app_user_sessions WHERE project_id = ${p.id})::int AS sessions,
           (SELECT count(*) FROM app_user_otps WHERE project_id = ${p.id})::int AS otps,
           (SELECT count(*) FROM mail_logs WHERE project_id = ${p.id} AND tag = 'auth.verify-email')::int AS mails`.execute(env.ctx.db.admin);
  return rows[0]!;
}

describe('sign-up is all or nothing', () => {
  it('writes the user, one session, one code and one queued verification mail together', async () => {
    const before = await counts();
    const email = uniqueEmail('whole');
    const res = await signup({ email });
    expect(res.statusCode).toBe(201);
    const id = res.json().data.user._id as string;
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(await counts()).toEqual({ users: before.users + 1, sessions: before.sessions + 1, otps: before.otps + 1, mails: before.mails + 1 });
    const { rows } = await sql<{ user_id: string }>`
      SELECT user_id FROM app_user_sessions WHERE project_id = ${p.id}
      UNION ALL SELECT user_id FROM app_user_otps WHERE project_id = ${p.id} AND purpose = 'verify_email'`.execute(env.ctx.db.admin);
    expect(rows.filter((r) => r.user_id === id)).toHaveLength(2);
  });

  it('a verification mail that cannot be queued leaves no account behind, and the email stays free', async () => {
    const email = uniqueEmail('nomail');
    env.ctx.mailer = {
      // Fails inside the sign-up transaction, as a database error while queueing would.
      sendSystemMail: async (_mail, tx) => void (await sql`SELECT 1 / 0`.execute(tx!)),
    };
    const before = await counts();
    try {
      const res = await signup({ email });
      expect(res.statusCode).toBe(500);
      expect(res.body).not.toContain('division');
    } finally {
      env.ctx.mailer = realMailer;
    }
    expect(await counts()).toEqual(before);
    expect((await signup({ email })).statusCode).toBe(201);
  });

  it('a taken email writes nothing: no session, code or mail for the existing account', async () => {
    const email = uniqueEmail('taken');
    expect((await signup({ email })).statusCode).toBe(201);
    const before = await counts();
    const again = await signup({ email });
    expect(again.statusCode).toBe(409);
    expect(await counts()).toEqual(before);
  });

  it('a taken unique field writes nothing, and names the field', async () => {
    expect((await signup({ email: uniqueEmail('h1'), handle: 'same-handle' })).statusCode).toBe(201);
    const before = await counts();
    const res = await signup({ email: uniqueEmail('h2'), handle: 'same-handle' });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toContain('handle');
    expect(await counts()).toEqual(before);
  });
});
