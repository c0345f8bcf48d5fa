/**
 * Threat: concurrent sends overspending the monthly quota (check-then-act races). The slot
 * is a guarded counter update in the same transaction as the MailLog and the job, so 100
 * simultaneous sends on a quota of 10 give exactly 10 accepted messages, 10 logs, 10 jobs.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { makeProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { logsOf, mailUsage, send, startMailTest, stopMailTest } from './helpers.js';

let fake: FakeResend;
let env: TestEnv;

beforeAll(async () => {
  ({ fake, env } = await startMailTest({ MAIL_MONTHLY_LIMIT: '10' }));
});
afterAll(() => stopMailTest(env, fake));

async function jobCount(projectId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE payload->>'projectId' = ${projectId}`.execute(env.ctx.db.admin);
  return rows[0]!.n;
}

describe('monthly mail quota under concurrency', () => {
  it('100 concurrent sends on a quota of 10: exactly 10 accepted, 90 × 429', async () => {
    const p = await makeProject(env.ctx);
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => send(env, p, { to: `u${i}@example.com`, subject: 'race', text: 't' })),
    );
    const accepted = results.filter((r) => r.statusCode === 200);
    const refused = results.filter((r) => r.statusCode === 429);
    expect(accepted).toHaveLength(10);
    expect(refused).toHaveLength(90);
    expect(refused[0]!.json()).toMatchObject({ success: false, message: 'Monthly mail limit exceeded.', limit: 10 });
    expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThan(0);
    expect(accepted.map((r) => r.json().data.monthlyUsage).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await mailUsage(env, p.id)).toBe(10);
    expect(await logsOf(env, p.id)).toHaveLength(10); // refused sends leave no log …
    expect(await jobCount(p.id)).toBe(10); // … and no job
  });

  it('a batch larger than what is left is refused whole, using no slot', async () => {
    const p = await makeProject(env.ctx);
    for (let i = 0; i < 8; i++) expect((await send(env, p, { to: 'a@example.com', subject: 's', text: 't' })).statusCode).toBe(200);
    const items = Array.from({ length: 3 }, () => ({ to: 'b@example.com', subject: 's', text: 't' }));
    const res = await env.app.inject({ method: 'POST', url: '/api/mail/send-batch', headers: p.sk, payload: items });
    expect(res.statusCode).toBe(429);
    expect(res.json().message).toBe('Monthly mail limit exceeded.');
    expect(await mailUsage(env, p.id)).toBe(8);
  });

  it('the counter is per UTC month: a new month starts from zero', async () => {
    const p = await makeProject(env.ctx);
    for (let i = 0; i < 10; i++) await send(env, p, { to: 'a@example.com', subject: 's', text: 't' });
    expect((await send(env, p, { to: 'a@example.com', subject: 's', text: 't' })).statusCode).toBe(429);
    const now = env.clock.now();
    env.clock.set(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 0, 1)));
    const res = await send(env, p, { to: 'a@example.com', subject: 's', text: 't' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.monthlyUsage).toBe(1);
  });
});
