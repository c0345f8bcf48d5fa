/**
 * The console's live records: a ticket asked for as the project's owner (dashboard session, no
 * API key in the browser) opens the same stream apps use and carries every change; another
 * operator cannot get one for a project that is not theirs, nor can a caller without a session.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestProject } from '../../helpers/fixtures.js';
import { openStream, type SseStream } from './sse.js';

let env: TestEnv;
let p: TestProject;
let base: string;
const streams: SseStream[] = [];

beforeAll(async () => {
  env = await createTestEnv({ REALTIME_POLL_MS: '20' });
  await env.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
  p = await makeProject(env.ctx);
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name: 'posts', realtime: true, schema: [{ key: 'title', type: 'String' }] } });
  expect(res.statusCode, res.body).toBe(201);
});
afterAll(async () => {
  for (const s of streams) s.close();
  await env.close();
});

const ticket = (headers: Record<string, string>, projectId = p.id) =>
  env.app.inject({ method: 'POST', url: `/api/projects/${projectId}/realtime/ticket`, headers, payload: { subscriptions: [{ collection: 'posts' }] } });

describe('realtime: the owner ticket of the console', () => {
  it("streams the project's changes to its owner through GET /api/realtime", async () => {
    const t = await ticket(p.owner.auth);
    expect(t.statusCode, t.body).toBe(200);
    const s = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(t.json().data.ticket)}`);
    streams.push(s);
    expect(s.status).toBe(200);
    await s.waitFor((e) => e.event === 'ready');
    const created = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/data/posts`, headers: p.owner.auth, payload: { title: 'hello' } });
    const id = created.json().data._id;
    const e = await s.waitFor((x) => x.event === 'create');
    expect(e.data).toMatchObject({ collection: 'posts', action: 'create', id });
  });

  it("refuses another operator's session (404, as every dashboard route) and no session at all (401)", async () => {
    const other = await makeOperator(env.ctx, { email: 'someone-else@example.com' });
    expect((await ticket(other.auth)).statusCode).toBe(404);
    expect((await ticket({})).statusCode).toBe(401);
  });
});
