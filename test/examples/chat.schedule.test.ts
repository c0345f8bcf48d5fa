/**
 * The chat example's nightly schedule (examples/chat/setup.ts): messages older than 30 days are
 * removed, newer ones stay, in rooms of any size. Provisioned exactly as `npm run example -- chat`
 * does, then run as the job worker would run a due tick (the dashboard's "run" with the tick's event).
 */
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat } from '../../examples/chat/setup.js';
import { provision, type Provisioned } from '../../examples/lib/provision.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';

let env: TestEnv;
let project: Provisioned;

beforeAll(async () => {
  env = await createTestEnv();
  await env.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
  project = await provision(base, chat, { siteUrl: 'http://localhost:5173' });
});
afterAll(() => env.close());

describe('the chat example clears messages older than 30 days every night', () => {
  it('removes the old ones and keeps the rest', async () => {
    const sk = { 'x-api-key': project.secretKey };
    const room = (await env.app.inject({ method: 'POST', url: '/api/data/rooms', headers: sk, payload: { name: 'Général 🎉' } })).json();
    const make = (text: string) => env.app.inject({ method: 'POST', url: '/api/data/messages/bulk', headers: sk, payload: Array.from({ length: 60 }, (_, i) => ({ room: room._id, text: `${text} ${i} — ünï` })) });
    expect((await make('old')).statusCode).toBe(201);
    expect((await make('old')).statusCode).toBe(201);
    // 120 messages written 40 days ago, as the clock of a running chat would have it.
    await sql`UPDATE documents SET created_at = now() - interval '40 days' WHERE project_id = ${project.projectId} AND data->>'text' LIKE 'old %'`.execute(env.ctx.db.admin);
    expect((await make('new')).statusCode).toBe(201);
    expect((await make('new')).statusCode).toBe(201);
    const tick = new Date().toISOString();
    const run = await env.app.inject({
      method: 'POST',
      url: `/api/projects/${project.projectId}/functions/clear-old-messages/run`,
      headers: { authorization: `Bearer ${project.operatorToken}` },
      payload: { event: { id: 'sch_test', scheduledAt: tick } },
    });
    expect(run.statusCode).toBe(200);
    expect(run.json().data).toMatchObject({ ok: true, value: { removed: 120 } });
    expect(run.json().data.logs[0].text).toMatch(/^removed 120 messages older than/);
    const left = await env.app.inject({ method: 'GET', url: '/api/data/messages?count=true', headers: sk });
    expect(left.json().data.count).toBe(120);
    const oldLeft = await env.app.inject({ method: 'GET', url: '/api/data/messages?text_regex=^old&count=true&include_deleted=true', headers: sk });
    expect(oldLeft.json().data.count).toBe(0);
  });
});
