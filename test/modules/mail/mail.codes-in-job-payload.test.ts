/**
 * Threat: one-time codes at rest in the job queue. Verification and reset codes used to sit in
 * clear in graphile-worker job payloads (so in the WAL and in backups) until the mail went
 * out. Queued messages are now AES-256-GCM encrypted with ENCRYPTION_KEY; the job row keeps
 * only what the queue needs (log id, project, quota slot). The mail still arrives with the
 * right code: end users' through the dev outbox, operators' through (fake) Resend.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { createTestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { startFakeResend, type FakeResend } from '../../fakes/resend.js';
import { authProject, PASSWORD } from '../auth/helpers.js';
import { freshIp } from '../operators/helpers.js';
import { PLATFORM_KEY } from './helpers.js';

const codeOf = (text: string | null | undefined) => /\b(\d{6})\b/.exec(text ?? '')?.[1];

/** The queued mail.send jobs, each row as text (payload and all). */
async function queuedJobs(env: TestEnv): Promise<string[]> {
  const { rows } = await sql<{ row: string }>`
    SELECT j::text AS row FROM graphile_worker._private_jobs j
      JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'mail.send'`.execute(env.ctx.db.admin);
  return rows.map((r) => r.row);
}

describe('end users (dev outbox)', () => {
  let env: TestEnv;
  let p: TestProject;
  beforeAll(async () => {
    env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
    p = await authProject(env);
  });
  afterAll(() => env.close());

  async function outboxCode(to: string, subject: RegExp): Promise<string> {
    const rows = await env.ctx.db.admin.selectFrom('mail_outbox').select(['to', 'subject', 'text']).orderBy('created_at', 'desc').execute();
    const mail = rows.find((r) => JSON.stringify(r.to).includes(to) && subject.test(r.subject));
    const code = codeOf(mail?.text);
    if (!code) throw new Error(`no code mailed to ${to}`);
    return code;
  }

  it('verification and reset codes are not in the job rows, and the mailed codes work', async () => {
    const email = 'queued@example.com';
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: p.pk, payload: { email, password: PASSWORD } });
    expect(res.statusCode).toBe(201);
    env.clock.advance(61_000);
    const reset = await env.app.inject({ method: 'POST', url: '/api/userAuth/request-password-reset', headers: p.pk, payload: { email } });
    expect(reset.statusCode).toBe(200);
    const jobs = await queuedJobs(env);
    expect(jobs.length).toBeGreaterThanOrEqual(2);

    await drainJobs(env);
    const verifyCode = await outboxCode(email, /Verify/);
    const resetCode = await outboxCode(email, /Reset/);
    for (const job of jobs) {
      expect(job).not.toContain(verifyCode);
      expect(job).not.toContain(resetCode);
      expect(job).not.toContain(email);
    }
    const verified = await env.app.inject({ method: 'POST', url: '/api/userAuth/verify-email', headers: p.pk, payload: { email, otp: verifyCode } });
    expect(verified.statusCode).toBe(200);
    const changed = await env.app.inject({
      method: 'POST', url: '/api/userAuth/reset-password', headers: p.pk, payload: { email, otp: resetCode, newPassword: 'brand new pass' },
    });
    expect(changed.statusCode).toBe(200);
  });
});

describe('operators (Resend)', () => {
  let env: TestEnv;
  let fake: FakeResend;
  beforeAll(async () => {
    fake = await startFakeResend();
    env = await createTestEnv({ RESEND_API_KEY: PLATFORM_KEY, RESEND_BASE_URL: fake.url });
  });
  afterAll(async () => {
    await env.close();
    await fake.close();
  });

  it('the verification code is not in the job row, and the mailed code verifies the account', async () => {
    const email = 'op-queued@example.com';
    const reg = await env.app.inject({ method: 'POST', url: '/api/auth/register', remoteAddress: freshIp(), payload: { email, password: 'long enough pw' } });
    expect(reg.statusCode).toBe(201);
    expect((await env.app.inject({ method: 'POST', url: '/api/auth/send-otp', payload: { email } })).statusCode).toBe(200);
    const jobs = await queuedJobs(env);
    expect(jobs).toHaveLength(1);

    await drainJobs(env);
    const sent = [...fake.emails.values()].find((m) => m.to.includes(email));
    const code = codeOf(sent?.text)!;
    expect(code).toMatch(/^\d{6}$/);
    expect(jobs[0]).not.toContain(code);
    expect(jobs[0]).not.toContain(email);
    const ok = await env.app.inject({ method: 'POST', url: '/api/auth/verify-otp', payload: { email, otp: code } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.user.isVerified).toBe(true);
  });
});
