/**
 * Dropping the partitions of deleted collections (and of deleted projects' collections).
 * Every deletion enqueues `collections.drop_partitions` in its own transaction, so the drop
 * happens even if this process dies right after the commit, and also tries it at once after
 * the commit, so a healthy node leaves nothing behind. The task is idempotent.
 */
import type { Task } from 'graphile-worker';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../database.js';
import { dropOrphanPartitions } from './partition-queries.js';

const TASK = 'collections.drop_partitions';

/** In the deleting transaction: makes sure a cleanup job will run. */
export async function enqueuePartitionCleanup(ctx: AppContext, tx: Kysely<Database>): Promise<void> {
  await ctx.queue.add(TASK, {}, { jobKey: TASK, maxAttempts: 25 }, tx);
}

/** After the commit: drops now; a failure is logged and left to the job. */
export async function dropPartitionsNow(ctx: AppContext): Promise<void> {
  try {
    await dropOrphanPartitions(ctx.db.pool);
  } catch (err) {
    ctx.log.warn({ err: (err as Error).message }, 'dropping deleted collections\' partitions failed; the job will retry');
  }
}

export function dropPartitionsTask(ctx: AppContext): Task {
  return async () => {
    const dropped = await dropOrphanPartitions(ctx.db.pool);
    if (dropped > 0) ctx.log.info({ dropped }, 'dropped deleted collections\' partitions');
  };
}
