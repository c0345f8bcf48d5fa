/**
 * Realtime under a collection's read rule (docs/rules.md, docs/realtime.md): an update that takes
 * a document out of what a subscriber may read sends that subscriber `leave` (the threat: a
 * client keeps showing a post after it became a draft someone else may not read), one that
 * brings it in sends it with its body, and a document a subscriber never could read is never
 * named to them, not even by a `leave`.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api } from '../data/helpers.js';
import { openStream, type SseEvent, type SseStream } from './sse.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
let base: string;
const streams: SseStream[] = [];
const [ALICE, BOB] = [objectId(), objectId()];
const as: Record<string, Record<string, string>> = {};

async function subscribe(headers: Record<string, string>, filter?: Record<string, string>): Promise<SseStream> {
  const t = await A.post('/api/realtime/ticket', headers, { subscriptions: [{ collection: 'blog', ...(filter ? { filter } : {}) }] });
  expect(t.status, JSON.stringify(t.body)).toBe(200);
  const s = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(t.body.data.ticket)}`);
  streams.push(s);
  await s.waitFor((e) => e.event === 'ready');
  return s;
}
const ids = (s: SseStream) => s.changes().map((e) => `${e.event}:${(e.data as { id: string }).id}`);
const body = (e: SseEvent) => (e.data as { document?: Record<string, unknown> }).document;
const settle = () => new Promise((r) => setTimeout(r, 500));

beforeAll(async () => {
  env = await createTestEnv({ REALTIME_POLL_MS: '20' });
  await env.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
  p = await makeProject(env.ctx);
  A = api(env);
  as.alice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, ALICE)}` };
  as.bob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, BOB)}` };
  const made = await env.app.inject({
    method: 'POST',
    url: `/api/projects/${p.id}/collections`,
    headers: p.owner.auth,
    payload: { name: 'blog', realtime: true, schema: [{ key: 'title', type: 'String' }, { key: 'published', type: 'Boolean' }, { key: 'author', type: 'String' }] },
  });
  expect(made.statusCode).toBe(201);
  const own = 'author = @auth.id';
  const set = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/blog/rules`, headers: p.owner.auth, payload: { list: 'published = true || author = @auth.id', create: own, update: own } });
  expect(set.statusCode).toBe(200);
});
afterAll(async () => {
  for (const s of streams) s.close();
  await env.close();
});

describe('realtime under a read rule', () => {
  it('a post that becomes a draft leaves the streams of those who may no longer read it, and comes back with its body when published', async () => {
    const bob = await subscribe(as.bob!);
    const anon = await subscribe(p.pk);
    const alice = await subscribe(as.alice!);
    const post = (await A.post('/api/data/blog', as.alice!, { title: 'hello', published: true, author: ALICE })).body._id;
    expect((await A.patch(`/api/data/blog/${post}`, as.alice!, { published: false })).status).toBe(200);
    expect((await A.patch(`/api/data/blog/${post}`, as.alice!, { title: 'still a draft' })).status).toBe(200);
    expect((await A.patch(`/api/data/blog/${post}`, as.alice!, { published: true })).status).toBe(200);
    await alice.waitFor(() => alice.changes().length >= 4);
    await bob.waitFor(() => bob.changes().length >= 3);
    await anon.waitFor(() => anon.changes().length >= 3);
    await settle();
    for (const s of [bob, anon]) {
      expect(ids(s)).toEqual([`create:${post}`, `leave:${post}`, `update:${post}`]);
      expect(s.changes()[1]!.data).toEqual({ collection: 'blog', id: post, version: 1 });
      expect(body(s.changes()[2]!)).toMatchObject({ _id: post, title: 'still a draft', published: true });
    }
    expect(ids(alice)).toEqual([`create:${post}`, `update:${post}`, `update:${post}`, `update:${post}`]);
  });

  it('a draft that was never readable is never named, not even by leave', async () => {
    const bob = await subscribe(as.bob!);
    const draft = (await A.post('/api/data/blog', as.alice!, { title: 'secret', published: false, author: ALICE })).body._id;
    expect((await A.patch(`/api/data/blog/${draft}`, as.alice!, { title: 'still secret' })).status).toBe(200);
    const marker = (await A.post('/api/data/blog', as.alice!, { title: 'marker', published: true, author: ALICE })).body._id;
    await bob.waitFor(() => bob.changes().length >= 1);
    await settle();
    expect(ids(bob)).toEqual([`create:${marker}`]);
  });

  it("a document that leaves the subscriber's filter but not the rule is a filter leave, once", async () => {
    const bob = await subscribe(as.bob!, { title: 'x' });
    const post = (await A.post('/api/data/blog', as.alice!, { title: 'x', published: true, author: ALICE })).body._id;
    expect((await A.patch(`/api/data/blog/${post}`, as.alice!, { published: false })).status).toBe(200);
    await bob.waitFor(() => bob.changes().length >= 2);
    await settle();
    expect(ids(bob)).toEqual([`create:${post}`, `leave:${post}`]);
  });
});
