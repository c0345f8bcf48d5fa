/**
 * Realtime fan-out by shape (src/modules/realtime/feed.ts, frames.ts): streams that may see an
 * event alike get the very same bytes (serialized once), streams that may see it differently
 * (a read rule, the end user) get their own frame, hidden fields reach none of them, and a
 * client that stops reading is dropped at its buffer limit without holding back the others,
 * then resumes with Last-Event-ID losing nothing. Read as raw bytes, as a browser receives them.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api } from '../data/helpers.js';
import { openStream, type SseStream } from './sse.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
let base: string;
const ALICE = objectId();
const BOB = objectId();
let asAlice: Record<string, string>;
let asBob: Record<string, string>;
const open: Array<{ close(): void }> = [];

/** A stream read as raw bytes, split into SSE frames (the text between blank lines), unparsed. */
interface RawStream {
  /** The frames with an `id:` line (changes and leaves), as they came. */
  frames(): string[];
  /** Resolves once `n` such frames came. */
  waitFrames(n: number): Promise<void>;
  /** Resolves once `n` comment lines (`: ping`) came. */
  waitPings(n: number): Promise<void>;
  /** Whether `ready` came (a stream closed while it caught up ends before it). */
  ready(): boolean;
  /** Starts reading (a stream opened with `read: false` reads nothing until then); resolves when the server ends the stream. */
  readToEnd(): Promise<void>;
  close(): void;
}

async function ticket(subscriptions: unknown, headers: Record<string, string>): Promise<string> {
  const t = await A.post('/api/realtime/ticket', headers, { subscriptions });
  expect(t.status, JSON.stringify(t.body)).toBe(200);
  return t.body.data.ticket as string;
}

async function rawStream(subscriptions: unknown, headers: Record<string, string>, opts: { read?: boolean; lastEventId?: string } = {}): Promise<RawStream> {
  const abort = new AbortController();
  const url = `${base}/api/realtime?ticket=${encodeURIComponent(await ticket(subscriptions, headers))}`;
  const res: Response = await fetch(url, { headers: opts.lastEventId ? { 'last-event-id': opts.lastEventId } : {}, signal: abort.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let bytes = Buffer.alloc(0);
  const frames: string[] = [];
  let pings = 0;
  let ready = false;
  let wake: (() => void) | null = null;
  let ended = false;
  const take = (chunk: Uint8Array) => {
    bytes = Buffer.concat([bytes, chunk]);
    let end: number;
    while ((end = bytes.indexOf('\n\n')) >= 0) {
      const frame = bytes.subarray(0, end).toString('utf8');
      bytes = bytes.subarray(end + 2);
      if (frame.startsWith('id: ')) frames.push(frame);
      if (frame === ': ping') pings++;
      if (frame.startsWith('event: ready')) ready = true;
    }
    wake?.();
  };
  const pump = async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        take(value);
      }
    } catch {
      // aborted
    }
    ended = true;
    wake?.();
  };
  const until = async (cond: () => boolean) => {
    while (!cond()) {
      if (ended) throw new Error(`the stream ended first; got ${frames.length} frames`);
      await new Promise<void>((r) => (wake = r));
    }
  };
  // until `ready` (the subscription is live), the first bytes are read in any case
  while (!ready && !ended) {
    const { value, done } = await reader.read();
    if (done) ended = true;
    else take(value);
  }
  let pumping: Promise<void> | null = ended ? Promise.resolve() : opts.read === false ? null : pump();
  const stream: RawStream = {
    frames: () => frames,
    ready: () => ready,
    waitFrames: (n) => until(() => frames.length >= n),
    waitPings: (n) => until(() => pings >= n),
    readToEnd: async () => {
      pumping ??= pump();
      await pumping;
    },
    close: () => abort.abort(),
  };
  open.push(stream);
  return stream;
}

async function collection(name: string, body: Record<string, unknown>) {
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name, realtime: true, ...body } });
  expect(res.statusCode, res.body).toBe(201);
}

const idOf = (frame: string) => /^id: (.*)$/m.exec(frame)![1]!;
const eventOf = (frame: string) => /^event: (.*)$/m.exec(frame)![1]!;
const dataOf = (frame: string) => JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) as { id: string; document?: Record<string, unknown> };

beforeAll(async () => {
  env = await createTestEnv({ REALTIME_POLL_MS: '20', REALTIME_MAX_STREAMS_PER_PROJECT: '20', REALTIME_HEARTBEAT_MS: '200' });
  await env.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
  p = await makeProject(env.ctx);
  A = api(env);
  asAlice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, ALICE)}` };
  asBob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, BOB)}` };
});
afterAll(async () => {
  for (const s of open) s.close();
  await env.close();
});

describe('one frame per shape', () => {
  it('sends byte-identical frames to every stream that may see a change alike, in the SSE format clients read', async () => {
    await collection('items', { schema: [{ key: 'title', type: 'String' }, { key: 'n', type: 'Number' }] });
    const same = [await rawStream([{ collection: 'items' }], p.pk), await rawStream([{ collection: 'items' }], p.pk)];
    const others = [await rawStream([{ collection: 'items' }], p.sk), await rawStream([{ collection: 'items', filter: { n_gte: '0' } }], asBob)];
    const created = await A.post('/api/data/items', p.sk, { title: 'héllo "quoted"', n: 1 });
    expect(created.status).toBe(201);
    const id = (created.body.data?._id ?? created.body._id) as string;
    expect((await A.patch(`/api/data/items/${id}`, p.sk, { n: 2 })).status).toBe(200);
    for (const s of [...same, ...others]) await s.waitFrames(2);
    const [create, update] = same[0]!.frames();
    // the frame as clients have always read it: id, event, one data line of the change's JSON
    const d = dataOf(create!);
    expect(d.document).toEqual({ _id: id, title: 'héllo "quoted"', n: 1, createdAt: expect.any(String), updatedAt: expect.any(String), isDeleted: false, deletedAt: null });
    expect(create).toBe(`id: ${idOf(create!)}\nevent: create\ndata: ${JSON.stringify({ collection: 'items', action: 'create', id, version: 0, document: d.document })}`);
    expect(idOf(create!)).toMatch(/^\d+-\d+$/);
    expect(eventOf(update!)).toBe('update');
    expect(dataOf(update!).document!.n).toBe(2);
    for (const s of [...same.slice(1), ...others]) expect(s.frames()).toEqual([create, update]);
    for (const s of [...same, ...others]) s.close();
  });

  it('sends each stream the frame its read rule and user decide (update, leave or nothing), and never a hidden field', async () => {
    await collection('blog', {
      schema: [{ key: 'title', type: 'String' }, { key: 'published', type: 'Boolean' }, { key: 'author', type: 'String' }, { key: 'phone', type: 'String', hidden: 'owner' }],
      rls: { enabled: true, mode: 'public-read', ownerField: 'author' },
    });
    const rules = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/blog/rules`, headers: p.owner.auth, payload: { list: 'published = true || author = @auth.id', create: 'author = @auth.id', update: 'author = @auth.id' } });
    expect(rules.statusCode, rules.body).toBe(200);
    const alice = await rawStream([{ collection: 'blog' }], asAlice);
    const bobs = [await rawStream([{ collection: 'blog' }], asBob), await rawStream([{ collection: 'blog' }], asBob)];
    const made = await A.post('/api/data/blog', asAlice, { title: 'draft', published: false, author: ALICE, phone: '555 0100' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = (made.body.data?._id ?? made.body._id) as string;
    expect((await A.patch(`/api/data/blog/${id}`, asAlice, { published: true })).status).toBe(200);
    expect((await A.patch(`/api/data/blog/${id}`, asAlice, { published: false, title: 'withdrawn' })).status).toBe(200);
    await alice.waitFrames(3);
    for (const b of bobs) await b.waitFrames(2);
    // Alice (the author) sees all three; Bob never the draft, then the published version, then leave
    expect(alice.frames().map(eventOf)).toEqual(['create', 'update', 'update']);
    expect(bobs[0]!.frames().map(eventOf)).toEqual(['update', 'leave']);
    // the published version is one frame for both users; the withdrawal differs (update vs leave)
    expect(bobs[0]!.frames()[0]).toBe(alice.frames()[1]);
    expect(bobs[0]!.frames()[1]).not.toBe(alice.frames()[2]);
    expect(idOf(bobs[0]!.frames()[1]!)).toBe(idOf(alice.frames()[2]!));
    expect(dataOf(bobs[0]!.frames()[1]!)).toEqual({ collection: 'blog', id, version: 2 });
    expect(dataOf(alice.frames()[2]!).document!.title).toBe('withdrawn');
    // two streams of one user and the same subscriptions: the same bytes
    expect(bobs[1]!.frames()).toEqual(bobs[0]!.frames());
    // the owner-hidden field is in no frame, not even the owner's (docs/rules.md)
    for (const s of [alice, ...bobs]) for (const f of s.frames()) expect(f).not.toContain('555 0100');
    for (const s of [alice, ...bobs]) s.close();
  });
});

describe('heartbeats', () => {
  it('keeps every idle stream open with comment lines (one timer for the node, a slice of the streams per tick)', async () => {
    await collection('quiet', { schema: [{ key: 'n', type: 'Number' }] });
    const idle = await Promise.all(Array.from({ length: 5 }, () => rawStream([{ collection: 'quiet' }], p.pk)));
    for (const s of idle) await s.waitPings(2);
    for (const s of idle) expect(s.frames()).toEqual([]);
    for (const s of idle) s.close();
  });
});

describe('a client too slow to read', () => {
  it('is dropped at its buffer limit while the others get every event, and resumes with Last-Event-ID losing nothing', async () => {
    await collection('big', { schema: [{ key: 'n', type: 'Number' }, { key: 'pad', type: 'String' }] });
    const fast: SseStream = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(await ticket([{ collection: 'big' }], p.pk))}`);
    open.push(fast);
    await fast.waitFor((e) => e.event === 'ready');
    const slow = await rawStream([{ collection: 'big' }], p.pk, { read: false });
    // about 24 MB of events: far beyond the 1 MB a stream may hold back plus the kernel's socket buffers
    const COUNT = 400;
    const pad = 'x'.repeat(60_000);
    for (let n = 0; n < COUNT; n++) expect((await A.post('/api/data/big', p.sk, { n, pad })).status).toBe(201);
    await fast.waitFor(() => fast.changes().length >= COUNT, 60_000);
    expect(fast.changes().map((e) => (e.data as { document: { n: number } }).document.n)).toEqual([...Array(COUNT).keys()]);
    // the slow client reads at last: its stream ended early, with the first events in order
    await slow.readToEnd();
    const got = slow.frames().map((f) => (dataOf(f).document as { n: number }).n);
    expect(got.length).toBeLessThan(COUNT);
    expect(got).toEqual([...Array(got.length).keys()]);
    // it resumes from its last event id, as EventSource does (a catch-up that outruns the
    // reader is cut at the same limit, so it may take a few reconnects): the rest, once each
    const rest: number[] = [];
    let last = idOf(slow.frames().at(-1)!);
    for (let attempt = 0; attempt < COUNT; attempt++) {
      const resumed = await rawStream([{ collection: 'big' }], p.pk, { lastEventId: last });
      if (resumed.ready()) await resumed.waitFrames(COUNT - got.length - rest.length);
      rest.push(...resumed.frames().map((f) => (dataOf(f).document as { n: number }).n));
      resumed.close();
      if (resumed.ready()) break;
      last = idOf(resumed.frames().at(-1)!);
    }
    expect([...got, ...rest]).toEqual([...Array(COUNT).keys()]);
    fast.close();
  });
});
