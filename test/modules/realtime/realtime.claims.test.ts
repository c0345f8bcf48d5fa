/**
 * Realtime under a read rule on the token's claims (`team = @auth.claims.team`, docs/rules.md):
 * such a rule is judged in the database with the claims of the token the ticket was asked with,
 * so a subscriber of team blue receives blue documents only, one of team red red ones only, and
 * one whose token has no claims (or no token) none at all.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { signAccessToken } from '../../../src/modules/auth/tokens.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api } from '../data/helpers.js';
import { openStream, type SseStream } from './sse.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
let base: string;
const streams: SseStream[] = [];
const as: Record<string, Record<string, string>> = {};

async function subscribe(headers: Record<string, string>): Promise<SseStream> {
  const t = await A.post('/api/realtime/ticket', headers, { subscriptions: [{ collection: 'board' }] });
  expect(t.status, JSON.stringify(t.body)).toBe(200);
  const s = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(t.body.data.ticket)}`);
  streams.push(s);
  await s.waitFor((e) => e.event === 'ready');
  return s;
}
const ids = (s: SseStream) => s.changes().map((e) => `${e.event}:${(e.data as { id: string }).id}`);

beforeAll(async () => {
  env = await createTestEnv({ REALTIME_POLL_MS: '20' });
  await env.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
  p = await makeProject(env.ctx);
  A = api(env);
  const record = (await env.ctx.projects.byId(p.id))!;
  const withClaims = (team: string) => signAccessToken(record, objectId(), 900, env.clock.now(), undefined, { team });
  as.blue = { ...p.pk, authorization: `Bearer ${await withClaims('blue')}` };
  as.red = { ...p.pk, authorization: `Bearer ${await withClaims('red')}` };
  as.none = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, objectId())}` };
  const made = await env.app.inject({
    method: 'POST',
    url: `/api/projects/${p.id}/collections`,
    headers: p.owner.auth,
    payload: { name: 'board', realtime: true, schema: [{ key: 'team', type: 'String' }, { key: 'text', type: 'String' }] },
  });
  expect(made.statusCode).toBe(201);
  const set = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/board/rules`, headers: p.owner.auth, payload: { list: 'team = @auth.claims.team' } });
  expect(set.statusCode, set.body).toBe(200);
});
afterAll(async () => {
  for (const s of streams) s.close();
  await env.close();
});

describe('realtime under @auth.claims', () => {
  it('each subscriber receives the changes its token’s claims admit, and nothing else', async () => {
    const blue = await subscribe(as.blue!);
    const red = await subscribe(as.red!);
    const none = await subscribe(as.none!);
    const anon = await subscribe(p.pk);
    const b = (await A.post('/api/data/board', p.sk, { team: 'blue', text: 'for blue' })).body._id;
    const r = (await A.post('/api/data/board', p.sk, { team: 'red', text: 'for red' })).body._id;
    expect((await A.patch(`/api/data/board/${b}`, p.sk, { text: 'blue again' })).status).toBe(200);
    await blue.waitFor(() => blue.changes().length >= 2);
    await red.waitFor(() => red.changes().length >= 1);
    await new Promise((res) => setTimeout(res, 500));
    expect(ids(blue)).toEqual([`create:${b}`, `update:${b}`]);
    expect(ids(red)).toEqual([`create:${r}`]);
    expect(ids(none)).toEqual([]);
    expect(ids(anon)).toEqual([]);
  });
});
