/**
 * The mail.send job: retries with backoff on transient failures, terminal failure marks the
 * log `failed` and refunds the slot, and a job that dies after the provider accepted is
 * retried without sending twice (Idempotency-Key = MailLog id, which the fake honours).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { encrypt } from '../../../src/lib/crypto.js';
import { MAIL_MAX_ATTEMPTS } from '../../../src/modules/mail/enqueue.js';
import { runMailJob } from '../../../src/modules/mail/worker.js';
import { logsOf, mailUsage, PLATFORM_KEY, runDueJobs, send, setProjectMailKey, startMailTest, stopMailTest } from './helpers.js';

let fake: FakeResend;
let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  ({ fake, env } = await startMailTest());
});
afterAll(() => stopMailTest(env, fake));
beforeEach(async () => {
  fake.reset();
  p = await makeProject(env.ctx);
});

async function pendingJob(logId: string) {
  const { rows } = await sql<{ attempts: number; run_at: Date; last_error: string | null }>`
    SELECT attempts, run_at, last_error FROM graphile_worker._private_jobs WHERE payload->>'logId' = ${logId}`.execute(env.ctx.db.admin);
  return rows[0];
}

describe('mail.send job', () => {
  it('retries a 5xx later (with backoff) and then sends once', async () => {
    fake.failNext({ status: 500, path: /^\/emails$/ });
    await send(env, p, { to: 'a@example.com', subject: 'retry', text: 't' });
    await drainJobs(env);
    const [log] = await logsOf(env, p.id);
    expect(log!.status).toBe('queued');
    const job = await pendingJob(log!.id);
    expect(job!.attempts).toBe(1);
    expect(job!.run_at.getTime()).toBeGreaterThan(Date.now()); // backoff: not due yet
    expect(job!.last_error).toMatch(/500/);

    await runDueJobs(env);
    const [after] = await logsOf(env, p.id);
    expect(after!.status).toBe('sent');
    expect(fake.emails.size).toBe(1);
    expect(await pendingJob(log!.id)).toBeUndefined();
  });

  it('429 from the provider is transient too', async () => {
    fake.failNext({ status: 429, message: 'Too many requests', path: /^\/emails$/ });
    await send(env, p, { to: 'a@example.com', subject: 'rl', text: 't' });
    await drainJobs(env);
    expect((await logsOf(env, p.id))[0]!.status).toBe('queued');
    await runDueJobs(env);
    expect((await logsOf(env, p.id))[0]!.status).toBe('sent');
  });

  it('a permanent refusal (422) marks the log failed at once and refunds the slot', async () => {
    await send(env, p, { to: 'ok@example.com', subject: 'fine', text: 't' });
    await send(env, p, { to: 'invalid@example.com', subject: 'refused', text: 't' });
    expect(await mailUsage(env, p.id)).toBe(2);
    await drainJobs(env);
    const logs = await logsOf(env, p.id);
    expect(logs.map((l) => l.status)).toEqual(['sent', 'failed']);
    expect(logs[1]!.error).toMatch(/Invalid `to`/);
    expect(await mailUsage(env, p.id)).toBe(1);
    expect(await pendingJob(logs[1]!.id)).toBeUndefined();
  });

  it('transient failures on every attempt end in failed + refund after the last attempt', async () => {
    fake.failNext({ status: 503, times: MAIL_MAX_ATTEMPTS, path: /^\/emails$/ });
    await send(env, p, { to: 'a@example.com', subject: 'down', text: 't' });
    await drainJobs(env);
    await runDueJobs(env, MAIL_MAX_ATTEMPTS - 1);
    const [log] = await logsOf(env, p.id);
    expect(log!.status).toBe('failed');
    expect(await mailUsage(env, p.id)).toBe(0);
    expect(fake.requests.filter((r) => r.path === '/emails')).toHaveLength(MAIL_MAX_ATTEMPTS);
  });

  it('worker killed mid-job: the provider accepted but the job never recorded it; the retry does not send twice', async () => {
    fake.failNext({ mode: 'drop', path: /^\/emails$/ }); // provider sends, then the answer is lost
    await send(env, p, { to: 'a@example.com', subject: 'once', text: 't' });
    await drainJobs(env);
    const [log] = await logsOf(env, p.id);
    expect(log!.status).toBe('queued');
    expect(fake.emails.size).toBe(1); // it did go out

    await runDueJobs(env);
    const [after] = await logsOf(env, p.id);
    expect(after!.status).toBe('sent');
    expect(fake.emails.size).toBe(1); // and only once
    expect(after!.provider_email_id).toBe([...fake.emails.keys()][0]);
    const calls = fake.requests.filter((r) => r.path === '/emails');
    expect(calls).toHaveLength(2);
    expect(new Set(calls.map((c) => c.idempotencyKey))).toEqual(new Set([log!.id]));
  });

  it('a re-run of an already-sent job (duplicate delivery) is a no-op', async () => {
    await send(env, p, { to: 'a@example.com', subject: 'dup', text: 't' });
    const [log] = await logsOf(env, p.id);
    await drainJobs(env);
    const sealed = encrypt(env.ctx.config.encryptionKey, JSON.stringify({ to: ['a@example.com'], subject: 'dup', text: 't' }));
    await runMailJob(env.ctx, { logId: log!.id, projectId: p.id, charged: true, period: '', sealed }, { attempts: 1, max_attempts: 8 });
    expect(fake.requests.filter((r) => r.path === '/emails')).toHaveLength(1);
  });

  it('two runs of one job at once (a lost runner still finishing while its replacement takes the job) send it once', async () => {
    await send(env, p, { to: 'a@example.com', subject: 'twice at once', text: 't' });
    const [log] = await logsOf(env, p.id);
    const sealed = encrypt(env.ctx.config.encryptionKey, JSON.stringify({ to: ['a@example.com'], subject: 'twice at once', text: 't' }));
    const job = { logId: log!.id, projectId: p.id, charged: true, period: '', sealed };
    fake.latencyMs = 200; // the first call is still at the provider when the second arrives
    const runs = await Promise.allSettled([
      runMailJob(env.ctx, job, { attempts: 1, max_attempts: 8 }),
      new Promise((r) => setTimeout(r, 50)).then(() => runMailJob(env.ctx, job, { attempts: 1, max_attempts: 8 })),
    ]);
    // The second meets the first in progress (409, transient): it throws, so the queue retries it.
    expect(runs.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect(String((runs[1] as PromiseRejectedResult).reason)).toMatch(/409/);
    // The retry finds the log sent and leaves it alone.
    await runMailJob(env.ctx, job, { attempts: 2, max_attempts: 8 });
    expect(fake.sentBy(PLATFORM_KEY)).toHaveLength(1);
    const [after] = await logsOf(env, p.id);
    expect(after).toMatchObject({ status: 'sent', provider_email_id: [...fake.emails.keys()][0] });
  });

  it('a job queued before messages were encrypted (message in clear) is still sent', async () => {
    await send(env, p, { to: 'a@example.com', subject: 'old', text: 't' });
    const [log] = await logsOf(env, p.id);
    const legacy = { logId: log!.id, projectId: p.id, charged: true, period: '', mail: { to: ['a@example.com'], subject: 'old', text: 't' } };
    await runMailJob(env.ctx, legacy as never, { attempts: 1, max_attempts: 8 });
    expect([...fake.emails.values()].map((m) => m.subject)).toEqual(['old']);
  });

  it('a revoked own key (401) is a permanent failure: failed + refund, no fallback to the platform key', async () => {
    await setProjectMailKey(env, p.id, 're_revoked');
    fake.invalidKeys.add('re_revoked');
    const res = await send(env, p, { to: 'a@example.com', subject: 'byok', text: 't' });
    expect(res.json().data.provider).toBe('byok');
    await drainJobs(env);
    const [log] = await logsOf(env, p.id);
    expect(log).toMatchObject({ status: 'failed', using_byok: true });
    expect(await mailUsage(env, p.id)).toBe(0);
    expect(fake.emails.size).toBe(0);
  });
});
