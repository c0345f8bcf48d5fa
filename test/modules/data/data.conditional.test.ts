/**
 * Conditional requests on one document (docs/data.md "Conditional writes: ETag and If-Match"):
 * a read answers the document's ETag, a write with `If-Match` happens only over that version
 * (412 `precondition_failed` otherwise, checked in the write's own statement), and a read with
 * `If-None-Match` answers 304 while the document is unchanged.
 *
 * Threat: lost updates between people editing the same document. Two writers holding the same
 * tag must not both succeed, even when they arrive together.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { createCollection } from './helpers.js';
import { objectId } from '../../../src/lib/ids.js';

let env: TestEnv;
let p: TestProject;

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

async function call(method: Method, url: string, headers: Record<string, string>, payload?: unknown) {
  const res = await env.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return {
    status: res.statusCode,
    etag: res.headers.etag as string | undefined,
    headers: res.headers,
    raw: res.body,
    body: res.body ? res.json() : undefined,
  };
}

const withTag = (h: Record<string, string>, name: 'if-match' | 'if-none-match', value: string) => ({ ...h, [name]: value });

async function newNote(fields: Record<string, unknown> = { title: 'first', body: 'hello' }) {
  const res = await call('POST', '/api/data/notes', p.sk, fields);
  expect(res.status).toBe(201);
  return { id: res.body._id as string, etag: res.etag! };
}

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  await createCollection(env, p, 'notes', [
    { key: 'title', type: 'String' },
    { key: 'body', type: 'String' },
    { key: 'meta', type: 'Object', fields: [{ key: 'pinned', type: 'Boolean' }] },
    { key: 'userId', type: 'String' },
  ]);
  await createCollection(env, p, 'cards', [{ key: 'title', type: 'String' }, { key: 'userId', type: 'String' }], { enabled: true, mode: 'public-read', ownerField: 'userId' });
});
afterAll(() => env.close());

describe('ETag on reads and writes', () => {
  it('a get answers a strong, quoted ETag, the one the create answered, and it varies with the caller', async () => {
    const { id, etag } = await newNote();
    expect(etag).toMatch(/^"[^"]+"$/); // quoted, not W/
    const got = await call('GET', `/api/data/notes/${id}`, p.pk);
    expect(got.status).toBe(200);
    expect(got.etag).toBe(etag);
    expect(String(got.headers.vary)).toMatch(/authorization/i);
    // Also with a projection or populate (a parsed read), and readable by browser scripts.
    const parsed = await call('GET', `/api/data/notes/${id}?fields=title`, { ...p.pk, origin: 'https://app.example' });
    expect(parsed.etag).toBe(etag);
    expect(String(parsed.headers['access-control-expose-headers'])).toContain('ETag');
  });

  it('every write answers the new version\'s ETag, different from every earlier one, even within one millisecond', async () => {
    // The test clock stands still: all these writes happen at the same "now".
    const { id, etag: created } = await newNote();
    const seen = [created];
    const first = await call('PATCH', `/api/data/notes/${id}`, p.sk, { title: 'second' });
    const dotted = await call('PATCH', `/api/data/notes/${id}`, p.sk, { 'meta.pinned': true });
    const put = await call('PUT', `/api/data/notes/${id}`, p.sk, { body: 'x' });
    const deleted = await call('DELETE', `/api/data/notes/${id}`, p.sk);
    const restored = await call('POST', `/api/data/notes/${id}/restore`, p.sk);
    for (const r of [first, dotted, put, restored]) {
      expect(r.status).toBe(200);
      expect(r.etag).toMatch(/^"[^"]+"$/);
      seen.push(r.etag!);
    }
    expect(deleted.status).toBe(200);
    expect(new Set(seen).size).toBe(seen.length);
    const now = await call('GET', `/api/data/notes/${id}`, p.sk);
    expect(now.etag).toBe(restored.etag);
    // updatedAt moved forward with each version.
    expect(Date.parse(restored.body.data.updatedAt)).toBeGreaterThan(Date.parse(dotted.body.data.updatedAt));
    expect(Date.parse(dotted.body.data.updatedAt)).toBeGreaterThan(Date.parse(first.body.data.updatedAt));
  });
});

describe('If-None-Match', () => {
  it('answers 304 without a body while the document is unchanged, 200 after a change', async () => {
    const { id, etag } = await newNote();
    const same = await call('GET', `/api/data/notes/${id}`, withTag(p.pk, 'if-none-match', etag));
    expect(same.status).toBe(304);
    expect(same.raw).toBe('');
    expect(same.etag).toBe(etag);
    expect((await call('GET', `/api/data/notes/${id}?fields=title`, withTag(p.pk, 'if-none-match', `"other", ${etag}`))).status).toBe(304);
    expect((await call('GET', `/api/data/notes/${id}`, withTag(p.pk, 'if-none-match', '*'))).status).toBe(304);
    expect((await call('GET', `/api/data/notes/${id}`, withTag(p.pk, 'if-none-match', `W/${etag}`))).status).toBe(304); // weak comparison

    await call('PATCH', `/api/data/notes/${id}`, p.sk, { title: 'changed' });
    const changed = await call('GET', `/api/data/notes/${id}`, withTag(p.pk, 'if-none-match', etag));
    expect(changed.status).toBe(200);
    expect(changed.body.data.title).toBe('changed');
    expect(changed.etag).not.toBe(etag);
  });

  it('never answers 304 with populate (the referenced documents have their own versions) nor for a malformed value', async () => {
    const { id, etag } = await newNote();
    const populated = await call('GET', `/api/data/notes/${id}?populate=userId`, withTag(p.sk, 'if-none-match', etag));
    expect(populated.status).toBe(200);
    expect((await call('GET', `/api/data/notes/${id}`, withTag(p.pk, 'if-none-match', 'not a tag'))).status).toBe(200);
  });
});

describe('If-Match', () => {
  it('writes over the version it names; a stale tag gets 412 precondition_failed with the current tag, and nothing is written', async () => {
    const { id, etag } = await newNote();
    const ok = await call('PATCH', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', etag), { title: 'mine' });
    expect(ok.status).toBe(200);
    expect(ok.body.data.title).toBe('mine');

    const stale = await call('PATCH', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', etag), { title: 'theirs' });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ success: false, data: {}, code: 'precondition_failed' });
    expect(stale.body.message).toBe(stale.body.error);
    expect(stale.etag).toBe(ok.etag);
    const dotted = await call('PATCH', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', etag), { 'meta.pinned': true });
    expect(dotted.status).toBe(412);
    const put = await call('PUT', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', etag), { body: 'theirs' });
    expect(put.status).toBe(412);

    const now = await call('GET', `/api/data/notes/${id}`, p.sk);
    expect(now.body.data).toMatchObject({ title: 'mine', body: 'hello' });
    expect(now.body.data.meta).toBeUndefined();
    expect(now.etag).toBe(ok.etag);
  });

  it('of two concurrent writers holding the same tag exactly one succeeds, the other gets 412 (one statement)', async () => {
    for (let round = 0; round < 3; round++) {
      const { id, etag } = await newNote();
      const results = await Promise.all(
        ['a', 'b', 'c', 'd'].map((who) => call('PATCH', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', etag), { title: who })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 412, 412, 412]);
      const winner = results.find((r) => r.status === 200)!;
      expect((await call('GET', `/api/data/notes/${id}`, p.sk)).body.data.title).toBe(winner.body.data.title);
    }
  });

  it('of two concurrent writers through the read-merge-write path (dotted keys) exactly one succeeds', async () => {
    const { id, etag } = await newNote();
    const results = await Promise.all(
      [true, false, true].map((pinned) => call('PATCH', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', etag), { 'meta.pinned': pinned, title: String(pinned) })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412]);
  });

  it('guards a user\'s edits with the publishable key under owner rules', async () => {
    const token = await makeUserToken(env.ctx, p, objectId());
    const user = { ...p.pk, authorization: `Bearer ${token}` };
    const created = await call('POST', '/api/data/cards', user, { title: 'card' });
    expect(created.status).toBe(201);
    const id = created.body._id as string;
    const results = await Promise.all(
      ['x', 'y'].map((title) => call('PATCH', `/api/data/cards/${id}`, withTag(user, 'if-match', created.etag!), { title })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
    const stale = results.find((r) => r.status === 412)!;
    expect(stale.body.code).toBe('precondition_failed');
  });

  it('accepts a list of tags, and * (the document must exist); a weak tag or another document\'s tag never matches', async () => {
    const { id, etag } = await newNote();
    const other = await newNote();
    expect((await call('PATCH', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', `W/${etag}`), { title: 'weak' })).status).toBe(412);
    expect((await call('PATCH', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', other.etag), { title: 'other' })).status).toBe(412);
    const listed = await call('PATCH', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', `"nope" , ${etag}`), { title: 'listed' });
    expect(listed.status).toBe(200);
    const star = await call('PATCH', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', '*'), { title: 'star' });
    expect(star.status).toBe(200);
    const missing = '0123456789abcdef01234567';
    expect((await call('PATCH', `/api/data/notes/${missing}`, withTag(p.sk, 'if-match', '*'), { title: 'x' })).status).toBe(404);
    expect((await call('PATCH', `/api/data/notes/${missing}`, withTag(p.sk, 'if-match', etag), { title: 'x' })).status).toBe(404);
  });

  it('a value that is not a list of entity tags is 400 if_match_invalid, never a 500', async () => {
    const { id } = await newNote();
    for (const bad of ['abc', '"unterminated', 'W/', '"a" "b"', ',']) {
      const res = await call('PATCH', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', bad), { title: 'x' });
      expect(res.status, bad).toBe(400);
      expect(res.body.code).toBe('if_match_invalid');
    }
    expect((await call('GET', `/api/data/notes/${id}`, p.sk)).body.data.title).toBe('first');
  });

  it('guards soft and hard deletes and restores', async () => {
    const { id, etag } = await newNote();
    const changed = await call('PATCH', `/api/data/notes/${id}`, p.sk, { title: 'changed' });
    const staleDelete = await call('DELETE', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', etag));
    expect(staleDelete.status).toBe(412);
    expect(staleDelete.body.code).toBe('precondition_failed');
    expect((await call('GET', `/api/data/notes/${id}`, p.sk)).status).toBe(200);
    const staleHard = await call('DELETE', `/api/data/notes/${id}?hard=true`, withTag(p.sk, 'if-match', etag));
    expect(staleHard.status).toBe(412);

    const deleted = await call('DELETE', `/api/data/notes/${id}`, withTag(p.sk, 'if-match', changed.etag!));
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id, message: 'Document deleted' });
    const gone = await call('GET', `/api/data/notes/${id}?include_deleted=true`, p.sk);
    expect(gone.body.data.isDeleted).toBe(true);

    expect((await call('POST', `/api/data/notes/${id}/restore`, withTag(p.sk, 'if-match', changed.etag!))).status).toBe(412);
    const restored = await call('POST', `/api/data/notes/${id}/restore`, withTag(p.sk, 'if-match', gone.etag!));
    expect(restored.status).toBe(200);
    expect(restored.body.data.isDeleted).toBe(false);
    expect(restored.etag).not.toBe(gone.etag);

    const hard = await call('DELETE', `/api/data/notes/${id}?hard=true`, withTag(p.sk, 'if-match', restored.etag!));
    expect(hard.status).toBe(200);
    expect((await call('GET', `/api/data/notes/${id}?include_deleted=true`, p.sk)).status).toBe(404);
  });

  it('a batch operation takes ifMatch: a stale one fails the whole batch (412, named), a current one writes', async () => {
    const a = await newNote({ title: 'a' });
    const b = await newNote({ title: 'b' });
    const changed = await call('PATCH', `/api/data/notes/${b.id}`, p.sk, { title: 'b2' });
    const stale = await call('POST', '/api/data/batch', p.sk, {
      operations: [
        { op: 'update', collection: 'notes', id: a.id, data: { title: 'a-new' }, ifMatch: a.etag },
        { op: 'update', collection: 'notes', id: b.id, data: { title: 'b-new' }, ifMatch: b.etag },
      ],
    });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ code: 'precondition_failed', operation: 1 });
    expect((await call('GET', `/api/data/notes/${a.id}`, p.sk)).body.data.title).toBe('a');
    const ok = await call('POST', '/api/data/batch', p.sk, {
      operations: [
        { op: 'update', collection: 'notes', id: a.id, data: { title: 'a-new' }, ifMatch: a.etag },
        { op: 'delete', collection: 'notes', id: b.id, ifMatch: changed.etag },
      ],
    });
    expect(ok.status).toBe(200);
    expect((await call('GET', `/api/data/notes/${a.id}`, p.sk)).body.data.title).toBe('a-new');
    expect((await call('GET', `/api/data/notes/${b.id}`, p.sk)).status).toBe(404);
    const bad = await call('POST', '/api/data/batch', p.sk, { operations: [{ op: 'restore', collection: 'notes', id: b.id, ifMatch: 'nope' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('if_match_invalid');
  });

  it('with an Idempotency-Key: a retry answers the first answer and its ETag; the same key with another If-Match is another request', async () => {
    const { id, etag } = await newNote();
    const h = { ...withTag(p.sk, 'if-match', etag), 'idempotency-key': `k-${id}` };
    const first = await call('PATCH', `/api/data/notes/${id}`, h, { title: 'once' });
    expect(first.status).toBe(200);
    const again = await call('PATCH', `/api/data/notes/${id}`, h, { title: 'once' });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.etag).toBe(first.etag);
    const other = await call('PATCH', `/api/data/notes/${id}`, { ...h, 'if-match': first.etag! }, { title: 'once' });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('idempotency_key_reused');
    // A keyed write whose precondition fails stores nothing: the key is free for the corrected retry.
    const k2 = { 'idempotency-key': `k2-${id}` };
    expect((await call('PATCH', `/api/data/notes/${id}`, { ...withTag(p.sk, 'if-match', etag), ...k2 }, { title: 'late' })).status).toBe(412);
  });
});
