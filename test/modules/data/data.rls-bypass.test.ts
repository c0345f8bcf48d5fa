/**
 * Threat: one end user reading or changing another user's documents, with the publishable key
 * (through the API, or through a code path that forgets the owner rules). The code answers
 * with the SDK's statuses (docs/wire-compatibility.md §4.5); the PostgreSQL policies hold even when the code is bypassed.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
const alice = objectId();
const bob = objectId();
let asAlice: Record<string, string>;
let asBob: Record<string, string>;
let notesId: string;
let aliceNote: string;
let bobNote: string;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  asAlice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  asBob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, bob)}` };
  const fields = [{ key: 'text', type: 'String' }, { key: 'userId', type: 'String' }];
  notesId = (await createCollection(env, p, 'notes', fields, { enabled: true, mode: 'private', ownerField: 'userId' }))._id;
  await createCollection(env, p, 'posts', fields, { enabled: true, mode: 'public-read' });
  await createCollection(env, p, 'open', fields);
  aliceNote = (await A.post('/api/data/notes', asAlice, { text: 'a' })).body._id;
  bobNote = (await A.post('/api/data/notes', asBob, { text: 'b' })).body._id;
});
afterAll(() => env.close());

describe('keys and RLS through the API', () => {
  it('pk writes need RLS and a Bearer', async () => {
    const blocked = await A.post('/api/data/open', p.pk, { text: 'x' });
    expect(blocked.status).toBe(403);
    expect(blocked.body.message).toBe('Enable RLS for this collection to allow publishable-key writes.');
    const noBearer = await A.post('/api/data/posts', p.pk, { text: 'x' });
    expect(noBearer.status).toBe(401);
    expect(noBearer.body.message).toBe('Provide a valid user Bearer token for write operations.');
    const badBearer = await A.post('/api/data/posts', { ...p.pk, authorization: 'Bearer nope' }, { text: 'x' });
    expect(badBearer.status).toBe(401);
    expect((await A.post('/api/data/open', p.sk, { text: 'x' })).status).toBe(201);
  });

  it('owner is auto-filled on create; a foreign owner is 403', async () => {
    const r = await A.post('/api/data/posts', asAlice, { text: 'mine', userId: '' });
    expect(r.status).toBe(201);
    expect(r.body.userId).toBe(alice);
    const bad = await A.post('/api/data/posts', asAlice, { text: 'x', userId: bob });
    expect(bad.status).toBe(403);
    expect(bad.body.message).toBe('Item at index 0 must have userId equal to your user id');
  });

  it('public-read: any key reads everything; only the owner updates; owner field immutable', async () => {
    const post = (await A.post('/api/data/posts', asAlice, { text: 'hello' })).body._id;
    expect((await A.get(`/api/data/posts/${post}`, p.pk)).status).toBe(200);
    const other = await A.patch(`/api/data/posts/${post}`, asBob, { text: 'hacked' });
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('You can only modify your own document.');
    const move = await A.patch(`/api/data/posts/${post}`, asAlice, { userId: bob });
    expect(move.status).toBe(403);
    expect(move.body.message).toBe('userId cannot be changed under RLS.');
    expect((await A.patch(`/api/data/posts/${post}`, asAlice, { text: 'edited' })).body.data.text).toBe('edited');
    expect((await A.del(`/api/data/posts/${post}`, asBob)).status).toBe(403);
    expect((await A.del(`/api/data/posts/${post}?hard=true`, asAlice)).status).toBe(403);
    expect((await A.del(`/api/data/posts/${post}`, asAlice)).status).toBe(200);
    expect((await A.post(`/api/data/posts/${post}/restore`, asBob, {})).status).toBe(403);
    expect((await A.post(`/api/data/posts/${post}/restore`, asAlice, {})).body.data).toMatchObject({ _id: post, isDeleted: false });
  });

  it('private: 401 without Bearer; lists and gets only the caller\'s rows; secret key sees all', async () => {
    const anon = await A.get('/api/data/notes', p.pk);
    expect(anon.status).toBe(401);
    expect(anon.body.message).toBe('Provide a valid user Bearer token for private reads.');
    const list = await A.get('/api/data/notes', asAlice);
    expect(list.body.data.items.map((d: { _id: string }) => d._id)).toEqual([aliceNote]);
    expect((await A.get(`/api/data/notes/${bobNote}`, asAlice)).status).toBe(404);
    expect((await A.get('/api/data/notes?count=true', asBob)).body.data.count).toBe(1);
    expect((await A.get('/api/data/notes', p.sk)).body.data.total).toBe(2);
    expect((await A.patch(`/api/data/notes/${bobNote}`, asAlice, { text: 'x' })).status).toBe(404);
  });

  it('/api/data/users and below is 403 for every key, any case', async () => {
    for (const url of ['/api/data/users', '/api/data/Users/abc', '/api/data/USERS/aaaaaaaaaaaaaaaaaaaaaaaa/restore']) {
      for (const h of [p.pk, p.sk]) {
        const r = await A.get(url, h);
        expect(r.status, url).toBe(403);
      }
    }
    expect((await A.post('/api/data/users', p.sk, { email: 'a@b.c' })).status).toBe(403);
  });
});

describe('native policies stop a code-level bypass', () => {
  const asPk = (userId: string) => ({ projectId: p.id, userId, keyKind: 'publishable' as const });

  it('a raw SELECT in a private collection returns only the scoped user\'s rows', async () => {
    const rows = await env.ctx.db.tenant(asPk(alice), (tx) =>
      sql<{ id: string }>`SELECT id FROM documents WHERE collection_id = ${notesId}`.execute(tx),
    );
    expect(rows.rows.map((r) => r.id)).toEqual([aliceNote]);
  });

  it('read straight from the collection\'s partition, a private collection shows only the scoped user\'s rows, until it is made public-read', async () => {
    const part = `documents_${notesId}`;
    const readAs = (userId: string) =>
      env.ctx.db.read(asPk(userId), (tx) => sql<{ id: string }>`SELECT id FROM ${sql.table(part)} ORDER BY id`.execute(tx).then((r) => r.rows.map((x) => x.id)));
    expect(await readAs(alice)).toEqual([aliceNote]);
    expect(await readAs(bob)).toEqual([bobNote]);
    const change = (mode: string) =>
      env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/notes/rls`, headers: p.owner.auth, payload: { enabled: true, mode, ownerField: 'userId' } });
    try {
      expect((await change('public-read')).statusCode).toBe(200);
      expect(await readAs(alice)).toEqual([aliceNote, bobNote].sort());
    } finally {
      expect((await change('private')).statusCode).toBe(200);
    }
    expect(await readAs(alice)).toEqual([aliceNote]);
  });

  it('a raw UPDATE or DELETE of another owner\'s row touches nothing', async () => {
    const n = await env.ctx.db.tenant(asPk(alice), async (tx) => {
      const u = await sql`UPDATE documents SET data = '{"text":"pwned"}' WHERE id = ${bobNote}`.execute(tx);
      const d = await sql`DELETE FROM documents WHERE id = ${bobNote}`.execute(tx);
      return [Number(u.numAffectedRows), Number(d.numAffectedRows)];
    });
    expect(n).toEqual([0, 0]);
    const row = await env.ctx.db.admin.selectFrom('documents').select('data').where('id', '=', bobNote).executeTakeFirstOrThrow();
    expect(row.data).toMatchObject({ text: 'b' });
  });

  it('a raw INSERT owned by someone else, or taking over a row, is rejected', async () => {
    await expect(
      env.ctx.db.tenant(asPk(alice), (tx) =>
        sql`INSERT INTO documents (project_id, collection_id, id, owner_id, data) VALUES (${p.id}, ${notesId}, ${objectId()}, ${bob}, '{}')`.execute(tx),
      ),
    ).rejects.toThrow(/row-level security/);
    await expect(
      env.ctx.db.tenant(asPk(alice), (tx) => sql`UPDATE documents SET owner_id = ${bob} WHERE id = ${aliceNote}`.execute(tx)),
    ).rejects.toThrow(/row-level security/);
  });

  it('a publishable scope cannot write in a collection without RLS', async () => {
    const open = await env.ctx.db.admin.selectFrom('collections').select('id').where('name', '=', 'open').executeTakeFirstOrThrow();
    await expect(
      env.ctx.db.tenant(asPk(alice), (tx) =>
        sql`INSERT INTO documents (project_id, collection_id, id, owner_id, data) VALUES (${p.id}, ${open.id}, ${objectId()}, ${alice}, '{}')`.execute(tx),
      ),
    ).rejects.toThrow(/row-level security/);
  });
});
