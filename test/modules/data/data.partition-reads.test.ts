/**
 * Reads name the collection's partition (src/modules/data/queries.ts). Two states a partition
 * can be in when a read arrives, which reads of the parent table never met:
 * - gone: the collection was deleted after this node looked it up (its cache is a moment
 *   behind): the client gets the 404 of a missing collection, not a 500;
 * - made by a node of the previous version during a rolling upgrade, which knows nothing of
 *   partition policies: a trigger gives them when its transaction commits, and they say what
 *   the collection's RLS says.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteCollection } from '../../../src/modules/collections/service.js';
import { readAccess } from '../../../src/modules/data/access.js';
import { parseListQuery } from '../../../src/modules/data/query.js';
import { listDocuments } from '../../../src/modules/data/read-service.js';
import type { FastifyRequest } from 'fastify';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { objectId } from '../../../src/lib/ids.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
});
afterAll(() => env.close());

describe('reads of a collection partition', () => {
  it('a collection deleted after this node looked it up answers 404, not 500', async () => {
    await createCollection(env, p, 'fleeting', [{ key: 'n', type: 'Number' }]);
    expect((await A.post('/api/data/fleeting', p.sk, { n: 1 })).status).toBe(201);
    const stale = (await env.ctx.collections.get(p.id, 'fleeting'))!;
    await deleteCollection(env.ctx, p.id, 'fleeting');
    const req = { keyKind: 'secret', project: { id: p.id }, headers: {} } as unknown as FastifyRequest;
    const access = await readAccess(env.ctx, req, stale);
    await expect(listDocuments(env.ctx, stale, access, parseListQuery({}))).rejects.toMatchObject({ status: 404, code: 'collection_not_found' });
  });

  it('a collection created the way the previous version did (no policy step) has its read policies when the creating transaction commits', async () => {
    // What a node of the previous version runs during a rolling upgrade: the row, then the partition.
    const id = objectId();
    await env.ctx.db.admin.transaction().execute(async (tx) => {
      await sql`INSERT INTO collections (id, project_id, name, fields, rls)
        VALUES (${id}, ${p.id}, 'legacy_notes', ${JSON.stringify([{ key: 'text', type: 'String' }, { key: 'userId', type: 'String' }])}::jsonb,
                ${JSON.stringify({ enabled: true, mode: 'private', ownerField: 'userId', requireAuthForWrite: true })}::jsonb)`.execute(tx);
      await sql.raw(`CREATE TABLE documents_${id} (LIKE documents INCLUDING DEFAULTS)`).execute(tx);
      await sql.raw(`ALTER TABLE documents_${id} ENABLE ROW LEVEL SECURITY`).execute(tx);
      await sql.raw(`ALTER TABLE documents ATTACH PARTITION documents_${id} FOR VALUES IN ('${id}')`).execute(tx);
    });
    env.ctx.collections.evictProject(p.id);
    const alice = objectId();
    const asAlice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
    const mine = (await A.post('/api/data/legacy_notes', asAlice, { text: 'a' })).body._id;
    expect((await A.post('/api/data/legacy_notes', p.sk, { text: 'not hers', userId: objectId() })).status).toBe(201);

    const list = await A.get('/api/data/legacy_notes', asAlice);
    expect(list.status).toBe(200);
    expect(list.body.data.items.map((d: { _id: string }) => d._id)).toEqual([mine]);
    const policies = await sql<{ policyname: string }>`SELECT policyname FROM pg_policies WHERE tablename = ${`documents_${id}`} ORDER BY 1`.execute(env.ctx.db.admin);
    expect(policies.rows.map((r) => r.policyname)).toEqual(['documents_full', 'documents_read', 'documents_tenant']);
    expect((await A.get('/api/data/legacy_notes', p.sk)).body.data.items).toHaveLength(2);
  });
});
