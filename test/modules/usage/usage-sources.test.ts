/**
 * The usage history's counted sources through their real paths (docs/dashboard.md "Usage
 * history"), against a real PostgreSQL and a fake AI provider on loopback: an HTTP function's
 * invocations and failures, the AI calls of the schema assistant (a failed one too), and the
 * peak of realtime streams open at once (kept when streams close, carried into the next hour
 * by those still open), read back through the dashboard route.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signOperatorToken } from '../../../src/modules/operators/tokens.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { createAiEnv, suggestSchema, type AiTestEnv } from '../ai/setup.js';
import { openStream, type SseStream } from '../realtime/sse.js';

const HOUR = 3600_000;
let t: AiTestEnv;
let op: TestOperator;
let p: TestProject;

async function series(metrics: string): Promise<Record<string, Array<number | null>>> {
  const hour = new Date(Math.floor(t.env.clock.now().getTime() / HOUR) * HOUR);
  const res = await t.env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/usage/history?from=${hour.toISOString()}&metrics=${metrics}`, headers: op.auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.series;
}

beforeAll(async () => {
  t = await createAiEnv();
  op = await makeOperator(t.env.ctx, { plan: 'pro' });
  p = await makeProject(t.env.ctx, op);
});
const streams: SseStream[] = [];
afterAll(async () => {
  for (const st of streams) st.close();
  await t.close();
});

describe('usage history sources', () => {
  it('counts HTTP function invocations and their failures', async () => {
    const deployed = await t.env.app.inject({
      method: 'POST',
      url: `/api/projects/${p.id}/functions`,
      headers: op.auth,
      payload: { name: 'maybe', kind: 'http', source: `export default (req) => { if (req.query.fail) throw new Error('no'); return { ok: true }; }` },
    });
    expect(deployed.statusCode, deployed.body).toBe(201);
    for (const q of ['', '', '?fail=1']) {
      const res = await t.env.app.inject({ method: 'GET', url: `/api/functions/maybe${q}`, headers: p.pk });
      expect(res.statusCode).toBe(q ? 502 : 200); // function_error
    }
    const s = await series('functions,requests.apiKey');
    expect(s['functions.invocations']).toEqual([3]);
    expect(s['functions.errors']).toEqual([1]);
    // The same calls are app requests too, by class.
    expect(s['requests.apiKey.2xx']).toEqual([2]);
    expect(s['requests.apiKey.5xx']).toEqual([1]);
  });

  it('counts the AI calls made for the project, failed ones too', async () => {
    t.groq.enqueue({ content: JSON.stringify({ collectionName: 'books', fields: [{ key: 'title', type: 'String' }] }) });
    expect((await suggestSchema(t.env, op, p.id, { description: 'books with a title' })).statusCode).toBe(200);
    t.groq.enqueue({ status: 500, content: 'upstream down' });
    expect((await suggestSchema(t.env, op, p.id, { description: 'books again' })).statusCode).toBeGreaterThanOrEqual(500);
    expect((await series('ai'))['ai.calls']).toEqual([2]);
  });

  it('keeps the peak of realtime streams per hour, and the open ones start the next hour', async () => {
    await t.env.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(t.env.app.server.address() as AddressInfo).port}`;
    const created = await t.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: op.auth, payload: { name: 'posts', realtime: true, schema: [{ key: 'title', type: 'String' }] } });
    expect(created.statusCode, created.body).toBe(201);
    for (let i = 0; i < 3; i++) {
      const ticket = await t.env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/realtime/ticket`, headers: op.auth, payload: { subscriptions: [{ collection: 'posts' }] } });
      const st = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(ticket.json().data.ticket)}`);
      streams.push(st);
      await st.waitFor((e) => e.event === 'ready');
    }
    expect((await series('realtime'))['realtime.peak']).toEqual([3]);
    streams[1]!.close();
    streams[2]!.close();
    await expect.poll(() => t.env.ctx.realtime.feed.streamsOf(p.id)).toBe(1);
    expect((await series('realtime'))['realtime.peak']).toEqual([3]); // the hour's peak stays
    // The next hour: the stream still open is its peak so far.
    const hour = Math.floor(t.env.clock.now().getTime() / HOUR) * HOUR;
    t.env.clock.set(new Date(hour + HOUR + 60_000));
    op.auth = { authorization: `Bearer ${await signOperatorToken(t.env.config.dashboardJwtSecret, op.id, t.env.clock.now())}` };
    const res = await t.env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/usage/history?from=${new Date(hour).toISOString()}&metrics=realtime`, headers: op.auth });
    expect(res.json().data.series['realtime.peak']).toEqual([3, 1]);
  });
});
