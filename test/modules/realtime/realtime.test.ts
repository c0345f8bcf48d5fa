/**
 * Realtime over Server-Sent Events, against a real PostgreSQL: an event per action with the
 * document, the list API's access rules on every event (a private collection's owner never
 * receives another user's document), filters, resume with Last-Event-ID without gap or
 * duplicate, a late-committing transaction delivered in order and never skipped, reset past
 * retention, limits, the end of a stream when its user's token expires, and two API nodes on
 * one database.
 */
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot } from '../../../src/boot.js';
import { objectId } from '../../../src/lib/ids.js';
import { buildApp } from '../../../src/server.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api } from '../data/helpers.js';
import { openStream, type SseEvent, type SseStream } from './sse.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
let base: string;
const streams: SseStream[] = [];

const ALICE = objectId();
const BOB = objectId();
let aliceToken: string;
let bobToken: string;

async function collection(name: string, body: Record<string, unknown>) {
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name, realtime: true, ...body } });
  expect(res.statusCode, res.body).toBe(201);
}

async function ticket(subscriptions: unknown, headers: Record<string, string> = p.pk) {
  return A.post('/api/realtime/ticket', headers, { subscriptions });
}

async function subscribe(subscriptions: unknown, headers: Record<string, string> = p.pk, lastEventId?: string): Promise<SseStream> {
  const t = await ticket(subscriptions, headers);
  expect(t.status, JSON.stringify(t.body)).toBe(200);
  const s = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(t.body.data.ticket)}`, lastEventId ? { 'last-event-id': lastEventId } : {});
  expect(s.status).toBe(200);
  streams.push(s);
  await s.waitFor((e) => e.event === 'ready');
  return s;
}

const doc = (e: SseEvent) => (e.data as { document?: Record<string, unknown> }).document;
const ids = (s: SseStream) => s.changes().map((e) => `${e.event}:${(e.data as { id: string }).id}`);
const settle = () => new Promise((r) => setTimeout(r, 400)); // a few poll intervals

beforeAll(async () => {
  env = await createTestEnv({ REALTIME_POLL_MS: '20', REALTIME_MAX_STREAMS_PER_PROJECT: '12', REALTIME_MAX_SUBSCRIPTIONS: '3' });
  await env.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
  p = await makeProject(env.ctx);
  A = api(env);
  aliceToken = await makeUserToken(env.ctx, p, ALICE);
  bobToken = await makeUserToken(env.ctx, p, BOB);
  await collection('posts', { schema: [{ key: 'title', type: 'String' }, { key: 'score', type: 'Number' }, { key: 'userId', type: 'String' }] });
  await collection('notes', {
    schema: [{ key: 'text', type: 'String' }, { key: 'userId', type: 'String' }],
    rls: { enabled: true, mode: 'private', ownerField: 'userId' },
  });
  const quiet = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name: 'quiet', schema: [] } });
  expect(quiet.statusCode).toBe(201);
});
afterAll(async () => {
  for (const s of streams) s.close();
  await env.close();
});

describe('events', () => {
  it('sends create, update, delete, restore and hard delete with the document and stream ids', async () => {
    const s = await subscribe([{ collection: 'posts' }]);
    const created = await A.post('/api/data/posts', p.sk, { title: 'hello', score: 1 });
    const id = created.body._id ?? created.body.data?._id;
    expect(id).toBeTruthy();
    expect((await A.patch(`/api/data/posts/${id}`, p.sk, { score: 2 })).status).toBe(200);
    expect((await A.del(`/api/data/posts/${id}`, p.sk)).status).toBe(200);
    expect((await A.post(`/api/data/posts/${id}/restore`, p.sk, {})).status).toBe(200);
    expect((await A.del(`/api/data/posts/${id}?hard=true`, p.sk)).status).toBe(200);
    await s.waitFor(() => s.changes().length >= 5);
    expect(ids(s)).toEqual([`create:${id}`, `update:${id}`, `delete:${id}`, `restore:${id}`, `delete:${id}`]);
    const [c, u] = s.changes();
    expect(doc(c!)).toMatchObject({ _id: id, title: 'hello', score: 1, isDeleted: false });
    expect(doc(u!)).toMatchObject({ _id: id, score: 2 });
    expect(c!.id).toMatch(/^\d+-\d+$/);
    // ids only grow
    const positions = s.changes().map((e) => e.id!.split('-').map(BigInt));
    for (let i = 1; i < positions.length; i++) {
      const [a, b] = [positions[i - 1]!, positions[i]!];
      expect(a[0]! < b[0]! || (a[0] === b[0] && a[1]! < b[1]!)).toBe(true);
    }
  });

  it('covers bulk creates and the atomic batch, in write order (more than 9 changes in one transaction)', async () => {
    const s = await subscribe([{ collection: 'posts' }]);
    const bulk = Array.from({ length: 12 }, (_, i) => ({ title: `b${i}` }));
    expect((await A.post('/api/data/posts/bulk', p.sk, bulk)).status).toBe(201);
    expect((await A.post('/api/data/batch', p.sk, { operations: [{ op: 'create', collection: 'posts', data: { title: 'last' } }] })).status).toBeLessThan(300);
    await s.waitFor(() => s.changes().length >= 13);
    expect(s.changes().map((e) => doc(e)?.title)).toEqual([...bulk.map((b) => b.title), 'last']);
  });

  it('sends nothing for a collection that does not stream, and refuses to subscribe to it', async () => {
    const t = await ticket([{ collection: 'quiet' }]);
    expect(t.status).toBe(400);
    expect(t.body.code ?? t.body.error?.code).toBe('collection_not_streaming');
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM changes WHERE collection = 'quiet'`.execute(env.ctx.db.admin);
    expect((await A.post('/api/data/quiet', p.sk, { a: 1 })).status).toBe(201);
    const after = await sql<{ n: number }>`SELECT count(*)::int AS n FROM changes WHERE collection = 'quiet'`.execute(env.ctx.db.admin);
    expect(after.rows[0]!.n).toBe(rows[0]!.n);
  });

  it('stops writing changes when realtime is turned off', async () => {
    await collection('temp', { schema: [{ key: 'x', type: 'Number' }] });
    const off = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/temp/realtime`, headers: p.owner.auth, payload: { enabled: false } });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().data.realtime).toBe(false);
    expect((await A.post('/api/data/temp', p.sk, { x: 1 })).status).toBe(201);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM changes WHERE collection = 'temp'`.execute(env.ctx.db.admin);
    expect(rows[0]!.n).toBe(0);
  });
});

describe('access rules on every event', () => {
  it("never sends a private collection's document to another user; each owner gets their own", async () => {
    const alice = await subscribe([{ collection: 'notes' }], { ...p.pk, authorization: `Bearer ${aliceToken}` });
    const bob = await subscribe([{ collection: 'notes' }], { ...p.pk, authorization: `Bearer ${bobToken}` });
    const admin = await subscribe([{ collection: 'notes' }], p.sk);
    expect((await A.post('/api/data/notes', { ...p.pk, authorization: `Bearer ${aliceToken}` }, { text: 'alice secret' })).status).toBe(201);
    expect((await A.post('/api/data/notes', { ...p.pk, authorization: `Bearer ${bobToken}` }, { text: 'bob secret' })).status).toBe(201);
    await admin.waitFor(() => admin.changes().length >= 2);
    await alice.waitFor((e) => doc(e)?.text === 'alice secret');
    await bob.waitFor((e) => doc(e)?.text === 'bob secret');
    await settle();
    expect(alice.changes().map((e) => doc(e)?.text)).toEqual(['alice secret']);
    expect(bob.changes().map((e) => doc(e)?.text)).toEqual(['bob secret']);
  });

  it("sends a collection's events only to those its read rule admits (blog drafts)", async () => {
    await collection('blog', { schema: [{ key: 'title', type: 'String' }, { key: 'published', type: 'Boolean' }, { key: 'author', type: 'String' }] });
    const rules = (payload: Record<string, string | null>) => env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/blog/rules`, headers: p.owner.auth, payload });
    const own = 'author = @auth.id';
    expect((await rules({ list: 'published = true || author = @auth.id', create: own })).statusCode).toBe(200);
    const asAlice = { ...p.pk, authorization: `Bearer ${aliceToken}` };
    const alice = await subscribe([{ collection: 'blog' }], asAlice);
    const bob = await subscribe([{ collection: 'blog' }], { ...p.pk, authorization: `Bearer ${bobToken}` });
    const anon = await subscribe([{ collection: 'blog' }]);
    expect((await A.post('/api/data/blog', asAlice, { title: 'draft', published: false, author: ALICE })).status).toBe(201);
    expect((await A.post('/api/data/blog', asAlice, { title: 'out', published: true, author: ALICE })).status).toBe(201);
    await alice.waitFor(() => alice.changes().length >= 2);
    await bob.waitFor((e) => doc(e)?.title === 'out');
    await anon.waitFor((e) => doc(e)?.title === 'out');
    await settle();
    expect(alice.changes().map((e) => doc(e)?.title)).toEqual(['draft', 'out']);
    expect(bob.changes().map((e) => doc(e)?.title)).toEqual(['out']);
    expect(anon.changes().map((e) => doc(e)?.title)).toEqual(['out']);
    for (const x of [alice, bob, anon]) x.close(); // the project's stream limit is shared by this file's tests
  });

  it("judges a read rule with a lookup in the database for every event: a list's members get its cards, nobody else (team board)", async () => {
    await collection('crew', { schema: [{ key: 'list', type: 'String' }, { key: 'user', type: 'String' }] });
    await collection('cards', { schema: [{ key: 'list', type: 'String' }, { key: 'text', type: 'String' }] });
    const rules = (name: string, payload: Record<string, string>) => env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/${name}/rules`, headers: p.owner.auth, payload });
    const member = '@collection.crew(list = $outer.list && user = @auth.id)';
    expect((await rules('crew', { list: 'user = @auth.id' })).statusCode).toBe(200);
    expect((await rules('cards', { list: member, create: member, update: member, delete: member })).statusCode).toBe(200);
    const [L1, L2, L3] = [objectId(), objectId(), objectId()];
    expect((await A.post('/api/data/crew', p.sk, { list: L1, user: ALICE })).status).toBe(201);
    expect((await A.post('/api/data/crew', p.sk, { list: L2, user: BOB })).status).toBe(201);
    const asAlice = { ...p.pk, authorization: `Bearer ${aliceToken}` };
    const asBob = { ...p.pk, authorization: `Bearer ${bobToken}` };
    const alice = await subscribe([{ collection: 'cards' }], asAlice);
    const bob = await subscribe([{ collection: 'cards' }], asBob);
    const anon = await subscribe([{ collection: 'cards' }]);
    const a1 = (await A.post('/api/data/cards', asAlice, { list: L1, text: 'a1' })).body._id as string;
    expect((await A.post('/api/data/cards', asBob, { list: L2, text: 'b1' })).status).toBe(201);
    expect((await A.post('/api/data/cards', p.sk, { list: L3, text: 'nobody' })).status).toBe(201);
    expect((await A.patch(`/api/data/cards/${a1}`, asAlice, { text: 'a1 moved' })).status).toBe(200);
    expect((await A.del(`/api/data/cards/${a1}`, asAlice)).status).toBe(200);
    await alice.waitFor((e) => e.event === 'delete');
    await bob.waitFor((e) => doc(e)?.text === 'b1');
    // Bob joins L1: the lookup is judged at the moment of each event
    expect((await A.post('/api/data/crew', p.sk, { list: L1, user: BOB })).status).toBe(201);
    expect((await A.post('/api/data/cards', asAlice, { list: L1, text: 'a2' })).status).toBe(201);
    await bob.waitFor((e) => doc(e)?.text === 'a2');
    await settle();
    expect(alice.changes().map((e) => `${e.event}:${String(doc(e)?.text)}`)).toEqual(['create:a1', 'update:a1 moved', 'delete:a1 moved', 'create:a2']);
    expect(bob.changes().map((e) => `${e.event}:${String(doc(e)?.text)}`)).toEqual(['create:b1', 'create:a2']);
    expect(anon.changes()).toEqual([]);
    for (const x of [alice, bob, anon]) x.close();
  });

  it('never logs a ticket (it is a credential in the URL)', async () => {
    const t = await ticket([{ collection: 'posts' }]);
    expect(t.status).toBe(200);
    const s = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(t.body.data.ticket)}`);
    await s.waitFor((e) => e.event === 'ready');
    s.close();
    await settle();
    expect(env.logs.some((l) => l.includes('/api/realtime?ticket=[REDACTED]'))).toBe(true);
    expect(env.logs.some((l) => l.includes(t.body.data.ticket.split('.')[2]))).toBe(false);
  });

  it('refuses a private subscription without the user token (401) and a bad ticket (401)', async () => {
    const t = await ticket([{ collection: 'notes' }]);
    expect(t.status).toBe(401);
    const s = await openStream(`${base}/api/realtime?ticket=not-a-ticket`);
    expect(s.status).toBe(401);
  });

  it('applies a ticket from another project to nothing of this one', async () => {
    const other = await makeProject(env.ctx);
    const t = await A.post('/api/realtime/ticket', other.pk, { subscriptions: [{ collection: 'posts' }] });
    expect(t.status).toBe(404); // the other project has no such collection
  });

  it('follows an RLS change at the moment of the event', async () => {
    await collection('diary', { schema: [{ key: 'text', type: 'String' }, { key: 'userId', type: 'String' }], rls: { enabled: true, mode: 'public-read', ownerField: 'userId' } });
    const bob = await subscribe([{ collection: 'diary' }], { ...p.pk, authorization: `Bearer ${bobToken}` });
    const rls = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/diary/rls`, headers: p.owner.auth, payload: { enabled: true, mode: 'private', ownerField: 'userId' } });
    expect(rls.statusCode, rls.body).toBe(200);
    expect((await A.post('/api/data/diary', { ...p.pk, authorization: `Bearer ${aliceToken}` }, { text: 'now private' })).status).toBe(201);
    await settle();
    expect(bob.changes()).toEqual([]);
  });
});

describe('filters', () => {
  it("sends only the documents the list API's filters would return", async () => {
    const s = await subscribe([{ collection: 'posts', filter: { score_gte: 10, title_in: 'a,b' } }]);
    await A.post('/api/data/posts/bulk', p.sk, [{ title: 'a', score: 10 }, { title: 'b', score: 9 }, { title: 'c', score: 50 }, { title: 'b', score: 11 }]);
    await s.waitFor(() => s.changes().length >= 2);
    await settle();
    expect(s.changes().map((e) => [doc(e)?.title, doc(e)?.score])).toEqual([['a', 10], ['b', 11]]);
  });

  it('sends leave with the id when an update takes a document out of the filter, and nothing for one that never matched', async () => {
    const s = await subscribe([{ collection: 'posts', filter: { score_gte: 100 } }]);
    const a = (await A.post('/api/data/posts', p.sk, { title: 'in', score: 100 })).body._id as string;
    const b = (await A.post('/api/data/posts', p.sk, { title: 'out', score: 1 })).body._id as string;
    expect((await A.patch(`/api/data/posts/${a}`, p.sk, { score: 5 })).status).toBe(200); // leaves
    expect((await A.patch(`/api/data/posts/${a}`, p.sk, { title: 'still out' })).status).toBe(200); // was out already
    expect((await A.patch(`/api/data/posts/${b}`, p.sk, { score: 2 })).status).toBe(200); // never in
    expect((await A.patch(`/api/data/posts/${a}`, p.sk, { score: 200 })).status).toBe(200); // back in
    await s.waitFor(() => s.changes().length >= 3);
    await settle();
    expect(ids(s)).toEqual([`create:${a}`, `leave:${a}`, `update:${a}`]);
    const leave = s.changes()[1]!;
    expect(leave.data).toEqual({ collection: 'posts', id: a, version: 1 });
    expect(leave.id).toMatch(/^\d+-\d+$/);
    s.close();
  });

  it('sends leave when an update adds the field that takes the document out (tag_ne)', async () => {
    const s = await subscribe([{ collection: 'posts', filter: { tag_ne: 'hidden' } }]);
    const c = (await A.post('/api/data/posts', p.sk, { title: 'untagged' })).body._id as string;
    expect((await A.patch(`/api/data/posts/${c}`, p.sk, { tag: 'hidden' })).status).toBe(200);
    await s.waitFor(() => s.changes().length >= 2);
    expect(ids(s)).toEqual([`create:${c}`, `leave:${c}`]);
    s.close();
  });

  it('sends leave when a document over 64 KB (previous version not recorded) shrinks out of the filter', async () => {
    const s = await subscribe([{ collection: 'posts', filter: { score_gte: 100 } }]);
    const big = (await A.post('/api/data/posts', p.sk, { title: 'x'.repeat(70 * 1024), score: 100 })).body._id as string;
    expect((await A.patch(`/api/data/posts/${big}`, p.sk, { title: 'small', score: 5 })).status).toBe(200);
    await s.waitFor(() => s.changes().length >= 2);
    expect(ids(s)).toEqual([`create:${big}`, `leave:${big}`]);
    expect(s.changes()[0]!.data).toMatchObject({ id: big, truncated: true });
    s.close();
  });

  it('an update that grows a document over 64 KB records no difference (nothing to rebuild from a truncated body): sent truncated to the subscriber', async () => {
    const s = await subscribe([{ collection: 'posts', filter: { score_gte: 100 } }]);
    const grown = (await A.post('/api/data/posts', p.sk, { title: 'small', score: 100, note: 'old' })).body._id as string;
    expect((await A.patch(`/api/data/posts/${grown}`, p.sk, { title: 'y'.repeat(70 * 1024), score: 5, extra: 1 })).status).toBe(200);
    await s.waitFor(() => s.changes().length >= 2);
    expect(ids(s)).toEqual([`create:${grown}`, `update:${grown}`]);
    expect(s.changes()[1]!.data).toMatchObject({ id: grown, truncated: true });
    const rows = await sql<{ truncated: boolean; prev_fields: unknown; prev_absent: unknown }>`
      SELECT truncated, prev_fields, prev_absent FROM changes WHERE doc_id = ${grown} AND action = 'update'`.execute(env.ctx.db.admin);
    expect(rows.rows).toEqual([{ truncated: true, prev_fields: null, prev_absent: null }]);
    s.close();
  });

  it('refuses the users collection (403): end users are read through /api/userAuth only', async () => {
    const t = await ticket([{ collection: 'users' }], p.sk);
    expect(t.status).toBe(403);
    expect(t.body.code).toBe('users_collection_protected');
  });

  it('refuses _regex and bad values with 400', async () => {
    expect((await ticket([{ collection: 'posts', filter: { title_regex: 'a.*' } }])).status).toBe(400);
    expect((await ticket([{ collection: 'posts', filter: { score_gt: 'many' } }])).status).toBe(400);
  });
});

describe('resume', () => {
  it('resumes after Last-Event-ID with no gap and no duplicate', async () => {
    const first = await subscribe([{ collection: 'posts' }]);
    await A.post('/api/data/posts', p.sk, { title: 'r1' });
    await A.post('/api/data/posts', p.sk, { title: 'r2' });
    await first.waitFor(() => first.changes().length >= 2);
    const last = first.changes()[1]!.id!;
    first.close();
    for (const t of ['r3', 'r4', 'r5']) await A.post('/api/data/posts', p.sk, { title: t });
    const again = await subscribe([{ collection: 'posts' }], p.pk, last);
    await A.post('/api/data/posts', p.sk, { title: 'r6' });
    await again.waitFor(() => again.changes().length >= 4);
    await settle();
    expect(again.changes().map((e) => doc(e)?.title)).toEqual(['r3', 'r4', 'r5', 'r6']);
  });

  it("treats a Last-Event-ID that is not one of ours as 'from now', and one beyond the present hides nothing", async () => {
    for (const id of ['garbage', '99999999999999999999-1', '18446744073709551615-5']) {
      const s = await subscribe([{ collection: 'posts' }], p.pk, id);
      await A.post('/api/data/posts', p.sk, { title: `after ${id}` });
      await s.waitFor((e) => doc(e)?.title === `after ${id}`);
      expect(s.events.some((e) => e.event === 'reset')).toBe(false);
      s.close();
    }
  });

  it('sends a change committed just before the reconnect before ready, even when the node has not polled it yet', async () => {
    // a node whose feed polls every 2 s: the reconnect comes between two of its polls
    const slow = await boot({ ...env.config, realtime: { ...env.config.realtime, pollMs: 2000 } }, { clock: env.clock, skipMigrations: true, logStream: new Writable({ write: (_c, _e, cb) => cb() }) });
    const app2 = await buildApp(slow.ctx);
    try {
      await app2.listen({ host: '127.0.0.1', port: 0 });
      const base2 = `http://127.0.0.1:${(app2.server.address() as AddressInfo).port}`;
      const open = async (lastEventId?: string) => {
        const t = await ticket([{ collection: 'posts' }]);
        const s = await openStream(`${base2}/api/realtime?ticket=${encodeURIComponent(t.body.data.ticket)}`, lastEventId ? { 'last-event-id': lastEventId } : {});
        streams.push(s);
        await s.waitFor((e) => e.event === 'ready');
        return s;
      };
      await open(); // another client of that node: its feed is running
      const first = await subscribe([{ collection: 'posts' }]); // on the fast node, for an id
      await A.post('/api/data/posts', p.sk, { title: 'seen' });
      const last = (await first.waitFor((e) => doc(e)?.title === 'seen')).id!;
      first.close();
      const missed = (await A.post('/api/data/posts', p.sk, { title: 'missed' })).body._id as string;
      // wait until the database holds it as final (other transactions on the server may delay that)
      const final = async () => (await sql`SELECT 1 FROM changes WHERE doc_id = ${missed} AND xid < pg_snapshot_xmin(pg_current_snapshot())`.execute(env.ctx.db.admin)).rows[0];
      for (let i = 0; i < 300 && !(await final()); i++) await new Promise((r) => setTimeout(r, 50));
      const again = await open(last);
      await A.post('/api/data/posts', p.sk, { title: 'live' });
      await again.waitFor((e) => doc(e)?.title === 'live', 30_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(again.events.map((e) => (e.event === 'ready' ? 'ready' : doc(e)?.title))).toEqual(['missed', 'ready', 'live']);
    } finally {
      await app2.close();
      await slow.close();
    }
  }, 60_000);

  it('says reset when retention removed changes since the last event', async () => {
    const s = await subscribe([{ collection: 'posts' }]);
    await A.post('/api/data/posts', p.sk, { title: 'old' });
    const e = await s.waitFor((x) => doc(x)?.title === 'old');
    s.close();
    const gone = (await A.post('/api/data/posts', p.sk, { title: 'gone' })).body._id as string;
    await env.app.inject({ method: 'GET', url: '/api/health' });
    const { sweepChanges } = await import('../../../src/modules/realtime/queries.js');
    // Only final changes are removed: wait out other transactions on the server (other test
    // files) until the change of 'gone' itself is swept, not merely an older one.
    const left = async () => (await sql`SELECT 1 FROM changes WHERE doc_id = ${gone}`.execute(env.ctx.db.admin)).rows[0];
    for (let i = 0; i < 200 && (await left()); i++) {
      await sweepChanges(env.ctx.db.admin, new Date(Date.now() + 60_000));
      if (await left()) await new Promise((r) => setTimeout(r, 50));
    }
    expect(await left()).toBeUndefined();
    const again = await subscribe([{ collection: 'posts' }], p.pk, e.id!);
    expect(again.events[0]!.event).toBe('reset');
    await A.post('/api/data/posts', p.sk, { title: 'after reset' });
    await again.waitFor((x) => doc(x)?.title === 'after reset');
  });
});

describe('a transaction that commits late', () => {
  it('is delivered after it commits, before the later changes, never skipped', async () => {
    const s = await subscribe([{ collection: 'posts' }]);
    const col = await env.ctx.collections.get(p.id, 'posts');
    const client = new pg.Client({ connectionString: env.databaseUrl });
    await client.connect();
    try {
      await client.query('BEGIN');
      const lateId = objectId();
      await client.query(
        `INSERT INTO documents (project_id, collection_id, id, data, size_bytes) VALUES ($1, $2, $3, '{"title":"late"}', 16)`,
        [p.id, col!.id, lateId],
      );
      await A.post('/api/data/posts', p.sk, { title: 'early' });
      await settle();
      expect(s.changes().map((e) => doc(e)?.title)).toEqual([]); // held back behind the open transaction
      await client.query('COMMIT');
      await s.waitFor(() => s.changes().length >= 2);
      expect(s.changes().map((e) => doc(e)?.title)).toEqual(['late', 'early']);
    } finally {
      await client.end();
    }
  });
});

describe('limits and expiry', () => {
  it('refuses more subscriptions per stream than allowed (429)', async () => {
    const r = await ticket([{ collection: 'posts' }, { collection: 'posts' }, { collection: 'posts' }, { collection: 'posts' }]);
    expect(r.status).toBe(429);
  });

  it('refuses more streams per project than allowed (429)', async () => {
    const t = await ticket([{ collection: 'posts' }]);
    const open: SseStream[] = [];
    let refused: SseStream | null = null;
    for (let i = 0; i < 20 && !refused; i++) {
      const s = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(t.body.data.ticket)}`);
      if (s.status === 429) refused = s;
      else open.push(s);
    }
    expect(refused?.status).toBe(429);
    for (const s of open) s.close();
    await settle();
  });

  it("ends the stream when the user's token expires", async () => {
    const short = await makeUserToken(env.ctx, p, ALICE, 1);
    const s = await subscribe([{ collection: 'notes' }], { ...p.pk, authorization: `Bearer ${short}` });
    await s.waitFor((e) => e.event === 'expired', 4000);
    await s.closed;
  });
});

describe('two API nodes on one database', () => {
  it('delivers a write on one node to a subscriber on the other', async () => {
    const second = await boot(env.config, { clock: env.clock, skipMigrations: true, logStream: new Writable({ write: (_c, _e, cb) => cb() }) });
    const app2 = await buildApp(second.ctx);
    try {
      await app2.listen({ host: '127.0.0.1', port: 0 });
      const base2 = `http://127.0.0.1:${(app2.server.address() as AddressInfo).port}`;
      const t = await ticket([{ collection: 'posts' }]);
      const s = await openStream(`${base2}/api/realtime?ticket=${encodeURIComponent(t.body.data.ticket)}`);
      streams.push(s);
      await s.waitFor((e) => e.event === 'ready');
      await A.post('/api/data/posts', p.sk, { title: 'from node one' });
      await s.waitFor((e) => doc(e)?.title === 'from node one');
      s.close();
    } finally {
      await app2.close();
      await second.close();
    }
  });
});
