/**
 * The database-bytes quota of data writes. The counter is guarded, so concurrent writers can
 * never overspend the plan. Growth is taken from this node's allowance (`QuotaLeases`, topped
 * up by reservations committed ahead of the write: see sql/05_quota_functions.sql) and settled
 * on the write's real growth; the project's counter row is never held through a disk sync.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { METRICS, refundAhead } from '../../lib/quota.js';
import { QuotaLeases } from '../../lib/quota-leases.js';
import { DataErrors } from './errors.js';

export const dbBytes = (projectId: string) => ({ subjectId: projectId, metric: METRICS.dbBytes });

const leasesByNode = new WeakMap<AppContext, QuotaLeases>();

/** This node's database-bytes allowances (given back at shutdown). */
function leases(ctx: AppContext): QuotaLeases {
  let l = leasesByNode.get(ctx);
  if (!l) {
    const created = new QuotaLeases();
    ctx.hooks.closing.push(() => created.release(ctx.db.admin));
    leasesByNode.set(ctx, (l = created));
  }
  return l;
}

/** An upper bound of a document's charged size: its jsonb text adds at most a space per `:` and `,`. */
export const sizeBound = (json: string) => 2 * Buffer.byteLength(json, 'utf8') + 16;

interface Paid<T> {
  result: T;
  growth: number;
}

/**
 * Takes `bound` (at least the write's growth) of quota, runs the write, then settles on its
 * real growth: unused bytes go back to this node's allowance, a shrink is refunded. A write
 * that fails, or returns null (lost an optimistic race), gives everything back.
 */
export async function paidFor<T>(
  ctx: AppContext, db: Tx, projectId: string, bound: number, limit: number, write: () => Promise<Paid<T> | null>,
): Promise<T | null> {
  const counter = dbBytes(projectId);
  const take = Math.max(0, bound);
  if (!(await leases(ctx).take(db, counter, take, limit))) throw DataErrors.database_limit();
  let paid: Paid<T> | null;
  try {
    paid = await write();
  } catch (err) {
    leases(ctx).give(counter, take);
    throw err;
  }
  const used = paid ? Math.max(0, paid.growth) : 0;
  leases(ctx).give(counter, take - used);
  if (paid && paid.growth < 0) await refundAhead(db, counter, -paid.growth);
  return paid ? paid.result : null;
}
