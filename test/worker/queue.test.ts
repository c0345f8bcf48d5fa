/**
 * Jobs are enqueued inside tenant transactions (atomic with their rows), yet the API role
 * must not be able to read or rewrite the job queue itself.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeProject, type TestProject } from '../helpers/fixtures.js';

let env: TestEnv;
let project: TestProject;
beforeAll(async () => {
  env = await createTestEnv();
  project = await makeProject(env.ctx);
});
afterAll(() => env.close());

describe('job queue from tenant transactions', () => {
  it('enqueues atomically: committed with the transaction, gone when it rolls back', async () => {
    const scope = { projectId: project.id, keyKind: 'secret' as const };
    const id = await env.ctx.db.tenant(scope, (tx) => env.ctx.queue.add('test.noop', { a: 1 }, { jobKey: 'k1' }, tx));
    expect(id).toMatch(/^\d+$/);
    await expect(
      env.ctx.db.tenant(scope, async (tx) => {
        await env.ctx.queue.add('test.noop', { a: 2 }, { jobKey: 'k2' }, tx);
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    const keys = await sql<{ key: string }>`SELECT key FROM graphile_worker._private_jobs WHERE key IS NOT NULL`.execute(env.ctx.db.admin);
    expect(keys.rows.map((r) => r.key)).toEqual(['k1']);
  });

  it('the API role cannot read or delete queued jobs directly', async () => {
    const scope = { projectId: project.id, keyKind: 'secret' as const };
    await expect(
      env.ctx.db.tenant(scope, (tx) => sql`SELECT * FROM graphile_worker._private_jobs`.execute(tx)),
    ).rejects.toThrow(/permission denied/);
    await expect(
      env.ctx.db.tenant(scope, (tx) => sql`DELETE FROM graphile_worker._private_jobs`.execute(tx)),
    ).rejects.toThrow(/permission denied/);
  });
});
