/**
 * How provider failures reach the operator: a rejected personal key is theirs to fix (401), a
 * rejected platform key is not (502); 429 passes Retry-After through; 5xx → 502; timeout → 504.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeCollection, makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { buildQuery, createAiEnv, PLATFORM_KEY, putAccountKey, putProjectKey, type AiTestEnv } from './setup.js';

let t: AiTestEnv;
let op: TestOperator;
let project: TestProject;

beforeAll(async () => {
  t = await createAiEnv({ AI_TIMEOUT_MS: '300' });
  op = await makeOperator(t.env.ctx, { plan: 'pro' });
  project = await makeProject(t.env.ctx, op);
  await makeCollection(t.env.ctx, project.id, 'notes', [{ key: 'title', type: 'String' }]);
});
afterAll(() => t.close());
beforeEach(async () => {
  t.groq.reset();
  await putAccountKey(t.env, op, null);
  await putProjectKey(t.env, op, project.id, null);
});

const ask = () => buildQuery(t.env, op, project.id, { collection: 'notes', prompt: 'all notes' });

describe('provider rejects the key (401)', () => {
  it('project key → 401 telling the operator to fix the project key', async () => {
    await putProjectKey(t.env, op, project.id, 'gsk_revoked_project');
    t.groq.rejectKeys.add('gsk_revoked_project');
    const res = await ask();
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ success: false, code: 'ai_key_rejected' });
    expect(res.json().message).toMatch(/rejected this project's AI key.*PUT \/api\/projects\/:projectId\/byok/);
  });

  it('account key → 401 telling the operator to fix the account key', async () => {
    await putAccountKey(t.env, op, 'gsk_revoked_account');
    t.groq.rejectKeys.add('gsk_revoked_account');
    const res = await ask();
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toMatch(/account AI key.*PUT \/api\/user\/me\/byok/);
  });

  it('platform key → 502 (the operator cannot fix it)', async () => {
    t.groq.rejectKeys.add(PLATFORM_KEY);
    const res = await ask();
    expect(res.statusCode).toBe(502);
    expect(res.json().code).toBe('ai_provider_failed');
    expect(res.json().message).toMatch(/platform key/);
  });
});

describe('other provider failures', () => {
  it('429 → 429 with Retry-After passed through', async () => {
    t.groq.enqueue({ status: 429, body: { error: { message: 'Rate limit reached' } }, headers: { 'retry-after': '17' } });
    const res = await ask();
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('17');
    expect(res.json().code).toBe('ai_provider_rate_limited');
  });

  it('429 with an HTTP-date Retry-After becomes seconds', async () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    t.groq.enqueue({ status: 429, body: {}, headers: { 'retry-after': at } });
    const res = await ask();
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(20);
  });

  it.each([500, 502, 503])('%i → 502 with a clear message', async (status) => {
    t.groq.enqueue({ status, body: { error: { message: 'internal' } } });
    const res = await ask();
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'ai_provider_failed', message: 'The AI provider failed to answer. Please try again later.' });
  });

  it('a 400 from the provider (our request) is a 502, not the client’s fault', async () => {
    t.groq.enqueue({ status: 400, body: { error: { message: 'model not found', code: 'model_not_found' } } });
    expect((await ask()).statusCode).toBe(502);
  });

  it("Groq's json_validate_failed is a 422 (the model produced no valid JSON)", async () => {
    t.groq.enqueue({ status: 400, body: { error: { message: 'Failed to generate JSON', code: 'json_validate_failed' } } });
    const res = await ask();
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('ai_output_invalid');
  });

  it('a slow provider → 504 after AI_TIMEOUT_MS', async () => {
    t.groq.enqueue({ delayMs: 8000 });
    const started = Date.now();
    const res = await ask();
    expect(res.statusCode).toBe(504);
    expect(res.json().code).toBe('ai_provider_timeout');
    // Answered at the timeout, long before the provider would have (even on a busy machine).
    expect(Date.now() - started).toBeLessThan(6000);
  });

  it('a 200 without a completion → 502', async () => {
    t.groq.enqueue({ body: { unexpected: true } });
    const res = await ask();
    expect(res.statusCode).toBe(502);
  });

  it('an unreachable provider → 502', async () => {
    const down = await createAiEnv({ GROQ_BASE_URL: 'http://127.0.0.1:9/openai/v1' });
    try {
      const o = await makeOperator(down.env.ctx);
      const p = await makeProject(down.env.ctx, o);
      await makeCollection(down.env.ctx, p.id, 'notes', []);
      const res = await buildQuery(down.env, o, p.id, { collection: 'notes', prompt: 'x' });
      expect(res.statusCode).toBe(502);
    } finally {
      await down.close();
    }
  });
});

describe('what the provider receives', () => {
  it('POST <GROQ_BASE_URL>/chat/completions with AI_MODEL, JSON mode and the schema in the system prompt', async () => {
    await ask();
    const req = t.groq.requests[0]!;
    expect(req.path).toBe('/openai/v1/chat/completions');
    expect(req.body.model).toBe('fake-model');
    expect(req.body.response_format).toEqual({ type: 'json_object' });
    const [system, user] = req.body.messages!;
    expect(system!.role).toBe('system');
    expect(system!.content).toContain('"title": String');
    expect(system!.content).toContain('"createdAt": Date');
    expect(user).toEqual({ role: 'user', content: 'all notes' });
  });
});
