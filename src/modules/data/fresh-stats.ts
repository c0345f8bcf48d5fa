/**
 * Planner statistics for a collection filled in bulk.
 *
 * autovacuum gives a new partition its first statistics at its next round (autovacuum_naptime:
 * a minute by default on a server of one's own; the embedded one uses 5 s). Until then the
 * planner guesses, and a list on a freshly imported collection can pick a plan 25 times slower
 * (measured: 76 instead of 1 900 lists/s on 10 000 documents, docs/data.md). So after a bulk
 * write this node ANALYZEs the partition when its statistics are missing or describe less than
 * half of it: in the background, after the write's answer, at most once per collection per
 * CHECK_INTERVAL_MS on this node. Afterwards autovacuum keeps them, as for any table.
 */
import type { AppContext } from '../../context.js';
import { analyzeIfStale } from '../collections/partition-queries.js';

/** Bulk writes smaller than this never trigger the check (autovacuum's own threshold is 50). */
export const MIN_BULK_ROWS = 50;
/** Rows changed since the last ANALYZE below which statistics are never called stale. */
const MIN_CHANGED = 1000;
const CHECK_INTERVAL_MS = 5000;

/** When each collection was last checked on this node (bounded: the oldest go first). */
const checked = new Map<string, number>();
const MAX_TRACKED = 10_000;

/** Called after a bulk write of `rows` documents into `collectionId` has committed. */
export function afterBulkWrite(ctx: AppContext, collectionId: string, rows: number): void {
  if (rows < MIN_BULK_ROWS) return;
  const now = Date.now();
  const last = checked.get(collectionId);
  if (last !== undefined && now - last < CHECK_INTERVAL_MS) return;
  checked.delete(collectionId);
  checked.set(collectionId, now);
  if (checked.size > MAX_TRACKED) checked.delete(checked.keys().next().value!);
  analyzeIfStale(ctx.db.admin, collectionId, MIN_CHANGED).catch((err) =>
    ctx.log.warn({ err, collectionId }, 'could not refresh the planner statistics of a collection after a bulk write'),
  );
}
