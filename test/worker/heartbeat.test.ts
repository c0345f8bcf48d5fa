/**
 * The heartbeat sweep releases the jobs of dead worker processes, but must not declare a live
 * worker dead just because the sweeper itself was cut off (a database outage makes every row
 * stale at once): a process sweeps only once its own heartbeat has held for a whole
 * WORKER_DEAD_AFTER_MS.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHeartbeat } from '../../src/worker/heartbeat.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const rows = async () => (await sql<{ process_id: string }>`SELECT process_id FROM worker_heartbeats ORDER BY process_id`.execute(env.ctx.db.admin)).rows.map((r) => r.process_id);
const lockedBy = async (jobId: string) =>
  (await sql<{ locked_by: string | null }>`SELECT locked_by FROM graphile_worker._private_jobs WHERE id = ${jobId}`.execute(env.ctx.db.admin)).rows[0]?.locked_by;

describe('worker heartbeat sweep', () => {
  it('releases the jobs of a silent process, but only after the sweeper itself has been alive for the whole threshold', async () => {
    const jobId = await env.ctx.queue.add('test.noop', {});
    await sql`UPDATE graphile_worker._private_jobs SET locked_by = 'worker-ghost', locked_at = now() WHERE id = ${jobId}`.execute(env.ctx.db.admin);
    await sql`INSERT INTO worker_heartbeats (process_id, worker_ids, last_seen) VALUES ('ghost', '{worker-ghost}', now() - interval '1 hour')`.execute(env.ctx.db.admin);

    const hb = startHeartbeat(env.ctx.db.pool, { deadAfterMs: 1000, workerIds: () => ['worker-me'], log: env.ctx.log });
    await hb.tick(); // just started (or just reconnected): not yet entitled to call anyone dead
    expect(await rows()).toEqual([hb.processId, 'ghost'].sort());
    expect(await lockedBy(jobId)).toBe('worker-ghost');

    await new Promise((r) => setTimeout(r, 1100));
    await hb.tick();
    expect(await rows()).toEqual([hb.processId]);
    expect(await lockedBy(jobId)).toBeNull();
    expect(env.logs.some((l) => l.includes('missed its heartbeat') && l.includes('"deadProcess":"ghost"'))).toBe(true);

    await hb.stop();
    expect(await rows()).toEqual([]);
  });
});
