/**
 * What an operator reads in the logs: one line per completed request, carrying the request id
 * and, for a request scoped to a project (its API key, or a dashboard route naming it), the
 * project id; in a developer's terminal (LOG_FORMAT=pretty) that line is short and single.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeProject, type TestProject } from '../helpers/fixtures.js';

type Line = Record<string, unknown> & { msg?: string; reqId?: string; projectId?: string };

const parse = (logs: string[]): Line[] => logs.flatMap((chunk) => chunk.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line));

describe('JSON request logs (LOG_FORMAT=json)', () => {
  let env: TestEnv;
  let project: TestProject;
  beforeAll(async () => {
    env = await createTestEnv({ LOG_FORMAT: 'json' });
    project = await makeProject(env.ctx);
  });
  afterAll(() => env.close());

  const linesOf = (reqId: string) => parse(env.logs).filter((l) => l.reqId === reqId);

  it('a public API request carries the id of the project its key resolved to, on its completion line', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/data/nothing-here', headers: { ...project.sk, 'x-request-id': 'req-public-1' } });
    expect(res.statusCode).toBeGreaterThanOrEqual(400); // an unknown collection: still scoped to the project
    const completed = linesOf('req-public-1').find((l) => l.msg === 'request completed');
    expect(completed).toMatchObject({ projectId: project.id, res: { statusCode: res.statusCode }, req: { method: 'GET', url: '/api/data/nothing-here' } });
  });

  it('a dashboard request naming a project carries its id', async () => {
    const res = await env.app.inject({ method: 'GET', url: `/api/projects/${project.id}`, headers: { ...project.owner.auth, 'x-request-id': 'req-dash-1' } });
    expect(res.statusCode).toBe(200);
    expect(linesOf('req-dash-1').find((l) => l.msg === 'request completed')?.projectId).toBe(project.id);
  });

  it('a request with no project in scope carries none, and an invalid key names no project', async () => {
    await env.app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': 'req-health-1' } });
    await env.app.inject({ method: 'GET', url: '/api/data/x', headers: { 'x-api-key': 'sk_live_nope', 'x-request-id': 'req-badkey-1' } });
    for (const id of ['req-health-1', 'req-badkey-1']) {
      const lines = linesOf(id);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.every((l) => l.projectId === undefined)).toBe(true);
    }
  });

  it('never logs the API key itself', () => {
    expect(env.logs.join('')).not.toContain(project.secretKey);
  });
});

describe('credentials in the query string', () => {
  const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789';
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv({ LOG_FORMAT: 'json', METRICS_TOKEN });
  });
  afterAll(() => env.close());

  it('/metrics?access_token=<token> is refused and the token is not written to the request log', async () => {
    const res = await env.app.inject({ method: 'GET', url: `/metrics?access_token=${METRICS_TOKEN}`, headers: { 'x-request-id': 'req-metrics-qs' } });
    expect(res.statusCode).toBe(401);
    expect(env.logs.join('')).not.toContain(METRICS_TOKEN);
    const completed = parse(env.logs).find((l) => l.reqId === 'req-metrics-qs' && l.msg === 'request completed');
    expect(completed).toMatchObject({ req: { url: '/metrics?access_token=[REDACTED]' } });
  });

  it.each([
    ['accessToken', 'camel case'], ['API_KEY', 'capitals'], ['client_secret', 'a secret'], ['sig', "a signed upload's signature"],
    ['X-Amz-Signature', 'a presigned URL'], ['password', 'a password'], ['acc%65ss_token', 'a percent-encoded name'],
  ])('masks %s (%s), keeps the other parameters', async (name) => {
    const secret = `s3cr3t-${Math.random().toString(36).slice(2)}`;
    await env.app.inject({ method: 'GET', url: `/api/health?page=2&${name}=${secret}&limit=5` });
    const text = env.logs.join('');
    expect(text).not.toContain(secret);
    expect(text).toContain(`/api/health?page=2&${name}=[REDACTED]&limit=5`);
  });
});

describe('pretty request logs (LOG_FORMAT=pretty)', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv({ LOG_FORMAT: 'pretty' });
  });
  afterAll(() => env.close());

  it('a request is one short line: method, URL, status and time, no separate "incoming" line', async () => {
    env.logs.length = 0;
    const res = await env.app.inject({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    const lines = env.logs.join('').split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/INFO: GET \/api\/health 200 \d+\.\dms$/);
    expect(lines[0]).not.toContain('{');
  });

  it('masks key query parameters on the pretty line too', async () => {
    env.logs.length = 0;
    await env.app.inject({ method: 'GET', url: '/api/schemas/x?key=pk_live_secretvalue' });
    const text = env.logs.join('');
    expect(text).not.toContain('pk_live_secretvalue');
    expect(text).toContain('key=[REDACTED]');
  });
});
