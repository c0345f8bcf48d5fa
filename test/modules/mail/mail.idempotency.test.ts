/**
 * Idempotency-Key on /api/mail/send and /api/mail/send-batch: a send retried after a lost
 * answer (or a 503 whose commit went through) queues and delivers one mail, answering the first
 * answer again; the same key with another message is refused; a send that rolled back (quota
 * full) leaves no key; concurrent retries deliver once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserve } from '../../../src/lib/quota-queries.js';
import { CLAIM_LEASE_MS } from '../../../src/modules/idempotency/service.js';
import { currentPeriod, mailCounter } from '../../../src/modules/mail/quota.js';
import type { TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { logsOf, mailEnv, mailUsage, send } from './helpers.js';

const LIMIT = 50;
let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  env = await mailEnv(null, { MAIL_MONTHLY_LIMIT: String(LIMIT) });
  p = await makeProject(env.ctx);
});
afterAll(() => env.close());

const keyed = (project: TestProject, key: string) => ({ ...project.sk, 'idempotency-key': key });
const outbox = (projectId: string, subject: string) =>
  env.ctx.db.admin.selectFrom('mail_outbox').select('id').where('project_id', '=', projectId).where('subject', '=', subject).execute();
const batch = (project: TestProject, items: unknown, key: string) =>
  env.app.inject({ method: 'POST', url: '/api/mail/send-batch', headers: keyed(project, key), payload: items as object });

describe('POST /api/mail/send with an Idempotency-Key', () => {
  it('retried: one mail queued, charged and delivered to the outbox, the same answer twice', async () => {
    const mail = { to: 'a@example.com', subject: 'Once', text: 'hello' };
    const first = await send(env, p, mail, keyed(p, 'send-1'));
    const again = await send(env, p, mail, keyed(p, 'send-1'));
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.json()).toMatchObject({ success: true, data: { provider: 'default', monthlyUsage: 1, monthlyLimit: LIMIT } });
    await drainJobs(env);
    expect(await outbox(p.id, 'Once')).toHaveLength(1);
    expect((await logsOf(env, p.id)).filter((l) => l.subject === 'Once')).toHaveLength(1);
    expect(await mailUsage(env, p.id)).toBe(1);
  });

  it('the same key with another message: 409 idempotency_key_reused, nothing queued', async () => {
    await send(env, p, { to: 'a@example.com', subject: 'First', text: 'x' }, keyed(p, 'send-2'));
    const other = await send(env, p, { to: 'b@example.com', subject: 'Second', text: 'x' }, keyed(p, 'send-2'));
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe('idempotency_key_reused');
    expect((await logsOf(env, p.id)).filter((l) => l.subject === 'Second')).toHaveLength(0);
  });

  it('concurrent retries queue one mail', async () => {
    const mail = { to: 'c@example.com', subject: 'Concurrent', text: 'x' };
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(env, p, mail, keyed(p, 'send-3'))));
    for (const a of answers) expect(a.statusCode).toBe(200);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect((await logsOf(env, p.id)).filter((l) => l.subject === 'Concurrent')).toHaveLength(1);
  });

  it('a send refused for a full quota stores no key: the retry once a slot is free is sent', async () => {
    const full = await makeProject(env.ctx);
    const counter = mailCounter(full.id, currentPeriod(env.ctx));
    await reserve(env.ctx.db.admin, counter, LIMIT, LIMIT);
    const mail = { to: 'd@example.com', subject: 'Full', text: 'x' };
    const refused = await send(env, full, mail, keyed(full, 'send-4'));
    expect(refused.statusCode).toBe(429);
    const keys = await env.ctx.db.admin.selectFrom('idempotency_keys').select('key').where('project_id', '=', full.id).execute();
    expect(keys).toHaveLength(0);
    await env.ctx.db.admin.updateTable('usage_counters').set({ used: LIMIT - 1 }).where('subject_id', '=', full.id).execute();
    const retried = await send(env, full, mail, keyed(full, 'send-4'));
    expect(retried.statusCode).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect((await send(env, full, mail, keyed(full, 'send-4'))).body).toBe(retried.body);
    expect((await logsOf(env, full.id)).filter((l) => l.subject === 'Full')).toHaveLength(1);
  });

  it('400 idempotency_key_invalid for a key of 256 characters', async () => {
    const res = await send(env, p, { to: 'a@example.com', subject: 'Bad key', text: 'x' }, keyed(p, 'k'.repeat(256)));
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('idempotency_key_invalid');
  });
});

describe('POST /api/mail/send-batch with an Idempotency-Key', () => {
  const items = [
    { to: 'x@example.com', subject: 'Batch once', text: '1' },
    { to: 'y@example.com', subject: 'Batch once', text: '2' },
  ];

  it('retried: the provider is called once, the same answer twice', async () => {
    const first = await batch(p, items, 'batch-1');
    const again = await batch(p, items, 'batch-1');
    expect(first.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await outbox(p.id, 'Batch once')).toHaveLength(2);
  });

  it('concurrent: sent once; the others replay it or are told it is still running', async () => {
    const mails = [{ to: 'z@example.com', subject: 'Batch concurrent', text: '1' }];
    const answers = await Promise.all([0, 1, 2, 3].map(() => batch(p, mails, 'batch-2')));
    for (const a of answers) {
      expect([200, 409]).toContain(a.statusCode);
      if (a.statusCode === 409) expect(a.json().code).toBe('idempotency_key_in_use');
    }
    expect(answers.filter((a) => a.statusCode === 200).length).toBeGreaterThan(0);
    expect(await outbox(p.id, 'Batch concurrent')).toHaveLength(1);
  });

  it('a claim its process never settled (a crash after the provider call) is taken over after the lease, not 409 for a day; the provider still sends once', async () => {
    const mails = [{ to: 'w@example.com', subject: 'Batch after crash', text: '1' }];
    expect((await batch(p, mails, 'batch-crashed')).statusCode).toBe(200);
    const charged = await mailUsage(env, p.id);
    // The process died after the call, before storing the answer: the claim stays unanswered.
    const key = () => env.ctx.db.admin.updateTable('idempotency_keys').where('project_id', '=', p.id).where('key', '=', 'batch-crashed');
    await key().set({ status: null, response: null }).execute();
    const early = await batch(p, mails, 'batch-crashed');
    expect(early.statusCode).toBe(409);
    expect(early.json().code).toBe('idempotency_key_in_use');
    await key().set({ created_at: new Date(env.ctx.clock.now().getTime() - CLAIM_LEASE_MS - 1000) }).execute();
    const retry = await batch(p, mails, 'batch-crashed');
    expect(retry.statusCode).toBe(200);
    expect(await outbox(p.id, 'Batch after crash')).toHaveLength(1);
    expect(await mailUsage(env, p.id)).toBe(charged);
    const again = await batch(p, mails, 'batch-crashed');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(retry.body);
  });

  it('a refused batch gives its key back', async () => {
    const bad = await batch(p, [{ to: 'not-an-email', subject: 'Bad', text: '1' }], 'batch-3');
    expect(bad.statusCode).toBe(400);
    const good = await batch(p, [{ to: 'ok@example.com', subject: 'Batch fixed', text: '1' }], 'batch-3');
    expect(good.statusCode).toBe(200);
    expect(await outbox(p.id, 'Batch fixed')).toHaveLength(1);
  });
});
