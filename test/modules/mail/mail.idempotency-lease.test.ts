/**
 * send-batch's Idempotency-Key claim, committed ahead of the provider call, and its lease
 * (docs/mail.md "Retries"): a claim left unanswered by a node that crashed mid-call is taken
 * over after CLAIM_LEASE_MS by exactly one retry, however many arrive at once; a fresh one still
 * answers 409 `idempotency_key_in_use`; and a node whose claim was taken over (slow, not dead)
 * does not give back the claim that replaced it when it fails late (a third request would run).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_LEASE_MS, fingerprintOf } from '../../../src/modules/idempotency/service.js';
import type { TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { startMailTest, stopMailTest } from './helpers.js';

let env: TestEnv;
let fake: FakeResend;
let p: TestProject;

beforeAll(async () => {
  ({ env, fake } = await startMailTest());
  p = await makeProject(env.ctx);
});
afterAll(() => stopMailTest(env, fake));

const batch = (items: unknown, key: string) =>
  env.app.inject({ method: 'POST', url: '/api/mail/send-batch', headers: { ...p.sk, 'idempotency-key': key }, payload: items as object });
const batchCalls = () => fake.requests.filter((r) => r.path === '/emails/batch').length;

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

/**
 * The row a node leaves when it dies between claiming the key and storing the answer: the
 * request's fingerprint (src/modules/idempotency/http.ts), no answer, claimed `ageMs` ago.
 */
function crashedClaim(key: string, ageMs: number, items: unknown) {
  const fingerprint = fingerprintOf({ method: 'POST', route: '/api/mail/send-batch', params: {}, query: {}, keyKind: 'secret', userId: null, body: items });
  return env.ctx.db.admin
    .insertInto('idempotency_keys')
    .values({ project_id: p.id, key, fingerprint, status: null, response: null, created_at: new Date(env.ctx.clock.now().getTime() - ageMs) })
    .execute();
}

describe('send-batch: the claim of a request that never finished', () => {
  it('a fresh unanswered claim still answers 409 idempotency_key_in_use', async () => {
    const mails = [{ to: 'a@example.com', subject: 'Fresh', text: '1' }];
    await crashedClaim('fresh-claim', 1000, mails);
    const res = await batch(mails, 'fresh-claim');
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('idempotency_key_in_use');
    expect(batchCalls()).toBe(0);
  });

  it('one past the lease is taken over by exactly one of several concurrent retries', async () => {
    const mails = [{ to: 'b@example.com', subject: 'Taken over', text: '1' }];
    await crashedClaim('crashed-claim', CLAIM_LEASE_MS + 1000, mails);
    const calls = batchCalls();
    fake.latencyMs = 200; // the retries overlap with the one that runs
    const answers = await Promise.all([0, 1, 2, 3].map(() => batch(mails, 'crashed-claim')));
    fake.latencyMs = 0;
    const ran = answers.filter((a) => a.statusCode === 200 && a.headers['idempotent-replayed'] === undefined);
    expect(ran).toHaveLength(1);
    for (const a of answers) {
      if (a === ran[0]) continue;
      if (a.statusCode === 409) expect(a.json().code).toBe('idempotency_key_in_use');
      else expect(a.body).toBe(ran[0]!.body);
    }
    expect(batchCalls()).toBe(calls + 1);
    const again = await batch(mails, 'crashed-claim');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(ran[0]!.body);
  });

  it('a node whose claim was taken over, failing late, does not give back the claim that replaced it: no third request runs', async () => {
    const mails = [{ to: 'c@example.com', subject: 'Slow node', text: '1' }];
    const calls = batchCalls();
    // Node A: its provider call fails, and the answer is slow to come back (its key would be given back).
    fake.failNext({ status: 500, path: /^\/emails\/batch$/, holdMs: 600 });
    const a = batch(mails, 'slow-node');
    await until(() => batchCalls() === calls + 1);
    // The lease runs out while A still waits; B takes the claim over and is slower still.
    env.clock.advance(CLAIM_LEASE_MS + 1000);
    fake.latencyMs = 2500;
    const b = batch(mails, 'slow-node');
    await until(() => batchCalls() === calls + 2);
    fake.latencyMs = 0;
    expect((await a).statusCode).toBeGreaterThanOrEqual(500);
    // B still runs: its claim holds the key.
    const c = await batch(mails, 'slow-node');
    expect(c.statusCode, c.body).toBe(409);
    expect(c.json().code).toBe('idempotency_key_in_use');
    const done = await b;
    expect(done.statusCode, done.body).toBe(200);
    const replay = await batch(mails, 'slow-node');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(done.body);
  });
});
