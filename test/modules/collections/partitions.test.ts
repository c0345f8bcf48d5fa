/**
 * Each collection's documents partition lives and dies with the collection: a deletion that
 * is interrupted after its commit leaves nothing behind once the cleanup job runs, and a write
 * racing a deletion is a 404, never a 500 or a document in limbo.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropOrphanPartitions } from '../../../src/modules/collections/partition-queries.js';
import { createCollection, deleteCollection } from '../../../src/modules/collections/service.js';
import { createDocument } from '../../../src/modules/data/write-service.js';
import { usage } from '../../../src/lib/quota-queries.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeCollection, makeProject, type TestProject } from '../../helpers/fixtures.js';
import { drainJobs } from '../../helpers/jobs.js';

let env: TestEnv;
let p: TestProject;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
});
afterAll(() => env.close());

const tableExists = async (name: string) =>
  (await sql`SELECT 1 FROM pg_class WHERE relname = ${name}`.execute(env.ctx.db.admin)).rows.length > 0;
const isAttached = async (name: string) =>
  (await sql`SELECT 1 FROM pg_inherits WHERE inhrelid = ${name}::regclass`.execute(env.ctx.db.admin)).rows.length > 0;

describe('partitions left behind by an interrupted deletion', () => {
  it('the cleanup job drops attached and detached partitions whose collection is gone, and keeps the others', async () => {
    const kept = await makeCollection(env.ctx, p.id, 'kept');
    const attached = await makeCollection(env.ctx, p.id, 'crashed-before-detach');
    const detached = await makeCollection(env.ctx, p.id, 'crashed-before-drop');
    await sql`INSERT INTO documents (project_id, collection_id, id, data) VALUES (${p.id}, ${attached.id}, ${'a'.repeat(24)}, '{}')`.execute(env.ctx.db.admin);
    await sql.raw(`ALTER TABLE documents DETACH PARTITION documents_${detached.id}`).execute(env.ctx.db.admin);
    await env.ctx.db.admin.deleteFrom('collections').where('id', 'in', [attached.id, detached.id]).execute();
    await env.ctx.queue.add('collections.drop_partitions', {}, { jobKey: 'collections.drop_partitions' });

    await drainJobs(env);

    expect(await tableExists(`documents_${attached.id}`)).toBe(false);
    expect(await tableExists(`documents_${detached.id}`)).toBe(false);
    expect(await isAttached(`documents_${kept.id}`)).toBe(true);
    expect(await env.ctx.db.admin.selectFrom('documents').select('id').where('collection_id', '=', attached.id).execute()).toEqual([]);
  });

  it('a collection deletion enqueues the cleanup in its own transaction', async () => {
    await makeCollection(env.ctx, p.id, 'queued');
    await deleteCollection(env.ctx, p.id, 'queued');
    const jobs = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'collections.drop_partitions'`.execute(env.ctx.db.admin);
    expect(jobs.rows[0]!.n).toBe(1);
  });
});

describe('bytes and concurrency of the partition cleanup', () => {
  it('refunds a document that reached the partition after the deletion emptied it', async () => {
    const q = await makeProject(env.ctx);
    const col = await makeCollection(env.ctx, q.id, 'late');
    const def = (await env.ctx.collections.get(q.id, 'late'))!;
    const access = { scope: { projectId: q.id, keyKind: 'secret' as const }, secret: true, userId: null, ownerFilter: null };
    // The deletion committed (row gone, partition emptied), then a node with the collection
    // still cached wrote into the still-attached partition and was charged for it.
    await env.ctx.db.admin.deleteFrom('collections').where('id', '=', col.id).execute();
    await createDocument(env.ctx, def, access, { text: 'x'.repeat(500) }, 1e9);
    const counter = { subjectId: q.id, metric: 'db_bytes' };
    const charged = await usage(env.ctx.db.admin, counter); // the document, plus this node's unspent lease
    const doc = await env.ctx.db.admin.selectFrom('documents').select('size_bytes').where('collection_id', '=', col.id).executeTakeFirstOrThrow();
    expect(doc.size_bytes).toBeGreaterThan(500);

    expect(await dropOrphanPartitions(env.ctx.db.pool)).toBe(1);
    expect(await tableExists(`documents_${col.id}`)).toBe(false);
    expect(await usage(env.ctx.db.admin, counter)).toBe(charged - doc.size_bytes);
  });

  it('two cleanups at once (the deleting request and the job) both succeed and drop it once', async () => {
    const col = await makeCollection(env.ctx, p.id, 'twice');
    await env.ctx.db.admin.deleteFrom('collections').where('id', '=', col.id).execute();
    // An open transaction keeps the first detach waiting, so the two really overlap.
    const long = await env.ctx.db.pool.connect();
    try {
      await long.query('BEGIN');
      await long.query('SELECT count(*) FROM documents');
      const first = dropOrphanPartitions(env.ctx.db.pool);
      await new Promise((r) => setTimeout(r, 200));
      const second = dropOrphanPartitions(env.ctx.db.pool);
      await new Promise((r) => setTimeout(r, 200));
      await long.query('COMMIT');
      expect((await Promise.all([first, second])).sort()).toEqual([0, 1]);
    } finally {
      long.release();
    }
    expect(await tableExists(`documents_${col.id}`)).toBe(false);
  });
});

describe('a write racing the deletion of its collection', () => {
  it('is a 404 collection_not_found, and nothing is stored', async () => {
    const col = await makeCollection(env.ctx, p.id, 'racing');
    const stale = (await env.ctx.collections.get(p.id, 'racing'))!;
    await deleteCollection(env.ctx, p.id, 'racing');
    const access = { scope: { projectId: p.id, keyKind: 'secret' as const }, secret: true, userId: null, ownerFilter: null };
    await expect(createDocument(env.ctx, stale, access, { a: 1 }, 1e9)).rejects.toMatchObject({ status: 404, code: 'collection_not_found' });
    expect(await env.ctx.db.admin.selectFrom('documents').select('id').where('collection_id', '=', col.id).execute()).toEqual([]);
  });
});

describe("one tenant's collection changes do not stall the others", () => {
  it('creating and deleting collections neither waits for nor blocks queries on other collections', async () => {
    const busy = await makeCollection(env.ctx, p.id, 'busy');
    await makeCollection(env.ctx, p.id, 'doomed');
    // A long transaction of another tenant, holding the documents table open.
    const long = await env.ctx.db.pool.connect();
    try {
      await long.query('BEGIN');
      await long.query(`SELECT count(*) FROM documents WHERE collection_id = '${busy.id}'`);
      const created = createCollection(env.ctx, p.id, 'pro', { name: 'fresh', fields: [{ key: 'k', type: 'String' }] });
      await expect(withTimeout(created, 3000)).resolves.toMatchObject({ name: 'fresh' });

      const deleting = deleteCollection(env.ctx, p.id, 'doomed');
      await new Promise((r) => setTimeout(r, 200));
      // The partition is being detached (waiting for the long transaction); queries go on.
      const other = env.ctx.db.admin.selectFrom('documents').select('id').where('collection_id', '=', busy.id).execute();
      await expect(withTimeout(other, 3000)).resolves.toEqual([]);
      await long.query('COMMIT');
      await expect(withTimeout(deleting, 5000)).resolves.toBe('doomed');
    } finally {
      long.release();
    }
    expect(await tableExists(`documents_${(await env.ctx.collections.get(p.id, 'fresh'))!.id}`)).toBe(true);
  });
});

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms))]);
}
