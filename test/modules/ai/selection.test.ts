/**
 * Key selection (project key → account key → platform key) and the platform key's monthly
 * session cap: reserved before the provider call, refunded on failure, reset each UTC month.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { usage } from '../../../src/lib/quota-queries.js';
import { PLANS } from '../../../src/modules/plans/plans.js';
import { makeCollection, makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { buildQuery, createAiEnv, PLATFORM_KEY, putAccountKey, putProjectKey, type AiTestEnv } from './setup.js';

let t: AiTestEnv;

beforeAll(async () => {
  t = await createAiEnv();
});
afterAll(() => t.close());
beforeEach(() => {
  t.groq.reset();
  t.env.clock.set(new Date('2025-03-15T12:00:00Z'));
});

async function setup(plan: 'free' | 'pro' = 'free'): Promise<{ op: TestOperator; project: TestProject }> {
  const op = await makeOperator(t.env.ctx, { plan });
  const project = await makeProject(t.env.ctx, op);
  await makeCollection(t.env.ctx, project.id, 'notes', [{ key: 'title', type: 'String' }]);
  return { op, project };
}

const ask = (s: { op: TestOperator; project: TestProject }) => buildQuery(t.env, s.op, s.project.id, { collection: 'notes', prompt: 'all notes' });
const sessions = (opId: string, period: string) => usage(t.env.ctx.db.admin, { subjectId: opId, metric: 'ai_sessions', period });
const lastAuth = () => t.groq.requests.at(-1)?.authorization;

describe('key selection order', () => {
  it('uses the project key, then the account key, then the platform key', async () => {
    const s = await setup();
    await putAccountKey(t.env, s.op, 'gsk_account_key');
    await putProjectKey(t.env, s.op, s.project.id, 'gsk_project_key');

    expect((await ask(s)).statusCode).toBe(200);
    expect(lastAuth()).toBe('Bearer gsk_project_key');

    await putProjectKey(t.env, s.op, s.project.id, null);
    expect((await ask(s)).statusCode).toBe(200);
    expect(lastAuth()).toBe('Bearer gsk_account_key');

    await putAccountKey(t.env, s.op, null);
    expect((await ask(s)).statusCode).toBe(200);
    expect(lastAuth()).toBe(`Bearer ${PLATFORM_KEY}`);
  });

  it("a project key applies to that project only; the owner's other projects use the account key", async () => {
    const s = await setup();
    const other = await makeProject(t.env.ctx, s.op, 'other');
    await makeCollection(t.env.ctx, other.id, 'notes', []);
    await putAccountKey(t.env, s.op, 'gsk_account_key');
    await putProjectKey(t.env, s.op, s.project.id, 'gsk_project_key');
    await buildQuery(t.env, s.op, other.id, { collection: 'notes', prompt: 'x' });
    expect(lastAuth()).toBe('Bearer gsk_account_key');
  });

  it('personal keys use no platform sessions and have no service-side cap', async () => {
    const s = await setup();
    await putAccountKey(t.env, s.op, 'gsk_account_key');
    for (let i = 0; i < PLANS.free.aiSessionsPerMonth + 2; i++) expect((await ask(s)).statusCode).toBe(200);
    expect(await sessions(s.op.id, '2025-03')).toBe(0);
  });

  it('ignores stored personal keys while the plan does not allow them', async () => {
    const s = await setup();
    await putAccountKey(t.env, s.op, 'gsk_account_key');
    PLANS.free.personalAiKey = false;
    try {
      await ask(s);
      expect(lastAuth()).toBe(`Bearer ${PLATFORM_KEY}`);
    } finally {
      PLANS.free.personalAiKey = true;
    }
  });
});

describe('platform session cap', () => {
  it('reserves the session before the provider is called', async () => {
    const s = await setup();
    let seen = -1;
    t.groq.onRequest = async () => {
      seen = await sessions(s.op.id, '2025-03');
    };
    expect((await ask(s)).statusCode).toBe(200);
    expect(seen).toBe(1);
  });

  it('free: 5 sessions a month, then 403 naming the limit and personal keys', async () => {
    const s = await setup('free');
    for (let i = 0; i < 5; i++) expect((await ask(s)).statusCode).toBe(200);
    const res = await ask(s);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('ai_session_limit_reached');
    expect(res.json().message).toMatch(/Monthly AI session limit reached \(5 on the free plan\)/);
    expect(res.json().message).toMatch(/personal AI key/);
    expect(t.groq.requests).toHaveLength(5);
  });

  it('pro: 20 sessions a month', async () => {
    const s = await setup('pro');
    for (let i = 0; i < 20; i++) expect((await ask(s)).statusCode).toBe(200);
    expect((await ask(s)).statusCode).toBe(403);
  });

  it('a personal key keeps working after the cap is reached', async () => {
    const s = await setup('free');
    for (let i = 0; i < 5; i++) await ask(s);
    expect((await ask(s)).statusCode).toBe(403);
    await putProjectKey(t.env, s.op, s.project.id, 'gsk_project_key');
    expect((await ask(s)).statusCode).toBe(200);
  });

  it('the counter is per owner account, shared by all their projects', async () => {
    const s = await setup('free');
    const other = await makeProject(t.env.ctx, s.op, 'second');
    await makeCollection(t.env.ctx, other.id, 'notes', []);
    for (let i = 0; i < 3; i++) await ask(s);
    for (let i = 0; i < 2; i++) expect((await buildQuery(t.env, s.op, other.id, { collection: 'notes', prompt: 'x' })).statusCode).toBe(200);
    expect((await ask(s)).statusCode).toBe(403);
  });

  it('resets on the first of the month (UTC)', async () => {
    t.env.clock.set(new Date('2025-03-31T23:59:00Z')); // before setup: the dashboard token lives 15 min
    const s = await setup('free');
    for (let i = 0; i < 5; i++) await ask(s);
    expect((await ask(s)).statusCode).toBe(403);
    t.env.clock.set(new Date('2025-04-01T00:00:01Z'));
    expect((await ask(s)).statusCode).toBe(200);
    expect(await sessions(s.op.id, '2025-03')).toBe(5);
    expect(await sessions(s.op.id, '2025-04')).toBe(1);
  });

  it('concurrent requests never overspend the cap', async () => {
    const s = await setup('free');
    const results = await Promise.all(Array.from({ length: 9 }, () => ask(s)));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 200)).toHaveLength(5);
    expect(codes.filter((c) => c === 403)).toHaveLength(4);
    expect(await sessions(s.op.id, '2025-03')).toBe(5);
  });
});

describe('refunds', () => {
  it.each([
    ['a 500', { status: 500, body: { error: { message: 'boom' } } }],
    ['a 429', { status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '7' } }],
  ])('a failed provider call (%s) gives the session back', async (_name, reply) => {
    const s = await setup('free');
    t.groq.enqueue(reply);
    expect((await ask(s)).statusCode).toBeGreaterThanOrEqual(429);
    expect(await sessions(s.op.id, '2025-03')).toBe(0);
    for (let i = 0; i < 5; i++) expect((await ask(s)).statusCode).toBe(200);
  });

  it('a rejected platform key refunds too', async () => {
    const s = await setup('free');
    t.groq.rejectKeys.add(PLATFORM_KEY);
    expect((await ask(s)).statusCode).toBe(502);
    expect(await sessions(s.op.id, '2025-03')).toBe(0);
  });

  it('the refund goes to the month that was charged, even across the boundary', async () => {
    t.env.clock.set(new Date('2025-05-31T23:59:59Z'));
    const s = await setup('free');
    let charged = -1;
    t.groq.onRequest = async () => {
      charged = await sessions(s.op.id, '2025-05');
      t.env.clock.set(new Date('2025-06-01T00:00:01Z'));
    };
    t.groq.enqueue({ status: 503, body: {} });
    expect((await ask(s)).statusCode).toBe(502);
    expect(charged).toBe(1);
    expect(await sessions(s.op.id, '2025-05')).toBe(0);
    expect(await sessions(s.op.id, '2025-06')).toBe(0);
  });

  it('an answer that fails validation still counts (the provider did the work)', async () => {
    const s = await setup('free');
    t.groq.enqueue({ content: 'not json' });
    expect((await ask(s)).statusCode).toBe(422);
    expect(await sessions(s.op.id, '2025-03')).toBe(1);
  });
});

describe('no key at all', () => {
  it('503 ai_not_configured without a platform key or personal key', async () => {
    const bare = await createAiEnv({}, null);
    try {
      const op = await makeOperator(bare.env.ctx);
      const project = await makeProject(bare.env.ctx, op);
      await makeCollection(bare.env.ctx, project.id, 'notes', []);
      const res = await buildQuery(bare.env, op, project.id, { collection: 'notes', prompt: 'x' });
      expect(res.statusCode).toBe(503);
      expect(res.json().code).toBe('ai_not_configured');
      expect(bare.groq.requests).toHaveLength(0);
      await putAccountKey(bare.env, op, 'gsk_mine');
      expect((await buildQuery(bare.env, op, project.id, { collection: 'notes', prompt: 'x' })).statusCode).toBe(200);
    } finally {
      await bare.close();
    }
  });
});
