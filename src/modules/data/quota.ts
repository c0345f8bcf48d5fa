/**
 * The database-bytes quota of data writes. The counter is guarded, so concurrent writers can
 * never overspend the plan. Growth is taken from this node's allowance (`QuotaLeases`, topped
 * up by reservations committed ahead of the write: see sql/05_quota_functions.sql) and settled
 * on the write's real growth; the project's counter row is never held through a disk sync.
 */
import type { AppContext } from '../../context.js';
import type { TenantScope, Tx } from '../../db/pool.js';
import { METRICS, reserve, type Counter } from '../../lib/quota-queries.js';
import { QuotaLeases } from '../../lib/quota-leases.js';
import { DataErrors } from './errors.js';

export const dbBytes = (projectId: string) => ({ subjectId: projectId, metric: METRICS.dbBytes });

/** This node's database-bytes allowances, built at start-up and given back at shutdown. */
export function createQuotaLeases(ctx: AppContext): QuotaLeases {
  const leases = new QuotaLeases();
  ctx.hooks.closing.push(() => leases.release(ctx.db.admin));
  return leases;
}

const leases = (ctx: AppContext): QuotaLeases => ctx.quotaLeases;

/** An upper bound of a document's charged size: its jsonb text adds at most a space per `:` and `,`. */
export const sizeBound = (json: string) => 2 * Buffer.byteLength(json, 'utf8') + 16;

export interface Paid<T> {
  result: T;
  growth: number;
}

/** How one write pays for its growth: on its own (`payEach`) or from a batch's budget (`paidForAll`). */
export type Pay = <T>(bound: number, write: () => Promise<Paid<T> | null>) => Promise<T | null>;

export const payEach = (ctx: AppContext, db: Tx, projectId: string, limit: number): Pay =>
  (bound, write) => paidFor(ctx, db, projectId, bound, limit, write);

/**
 * Takes `bound` (at least the write's growth) of quota, runs the write, then settles on its
 * real growth: unused bytes, and the bytes of a shrink, go to this node's allowance. A write
 * that fails, or returns null (lost an optimistic race), gives everything back.
 */
export async function paidFor<T>(
  ctx: AppContext, db: Tx, projectId: string, bound: number, limit: number, write: () => Promise<Paid<T> | null>,
): Promise<T | null> {
  const counter = dbBytes(projectId);
  const take = Math.max(0, bound);
  if (!(await leases(ctx).take(db, counter, take, limit))) throw DataErrors.database_limit();
  let unused = take;
  try {
    const paid = await write();
    // A shrink joins this node's allowance (the counter keeps those bytes as reserved by it),
    // like unused bytes: no counter round trip, and no wait on the project's counter row, for
    // the updates that make a document smaller; past two chunks giveBack returns the excess.
    unused = take - (paid ? paid.growth : 0);
    return paid ? paid.result : null;
  } finally {
    await giveBack(ctx, counter, unused, (trim) => trim(db));
  }
}

/**
 * Returns a write's unused bytes to this node's allowance, and what grew past two chunks to the
 * counter: on success and on failure alike, or a failed large write (a whole batch's bound)
 * would read as used until the node's next write. `withDb` lends the trim a connection; a trim
 * that cannot get one keeps the bytes here (still reserved, nothing lost) and fails no write.
 */
async function giveBack(
  ctx: AppContext, counter: Counter, amount: number,
  withDb: (trim: (db: Tx) => Promise<void>) => Promise<void>,
): Promise<void> {
  leases(ctx).give(counter, amount);
  // trim checks this too; asking first keeps an await off the path of nearly every write.
  if (!leases(ctx).overflows(counter)) return;
  await withDb((db) => leases(ctx).trim(db, counter)).catch(() => undefined);
}

/**
 * Several writes in one transaction (a batch). Leases are taken outside transactions, so
 * `bound` (at least the writes' combined growth) is taken first; inside the
 * transaction the writes add up their growth and `settle(tx)` reserves what the bound missed
 * in that transaction (the plan does not allow it: 403, and the transaction rolls back).
 * After a commit the unused allowance, and a net shrink, go to this node; after a rollback,
 * all it took; either way, past two chunks, the excess to the counter.
 */
export async function paidForAll<T>(
  ctx: AppContext, scope: TenantScope, bound: number, limit: number,
  run: (pay: Pay, settle: (tx: Tx) => Promise<void>) => Promise<T>,
): Promise<T> {
  const counter = dbBytes(scope.projectId);
  const take = Math.max(0, bound);
  // Its own connection, given back before the transaction takes one (leases are taken outside transactions).
  if (!(await ctx.db.read(scope, (db) => leases(ctx).take(db, counter, take, limit)))) throw DataErrors.database_limit();
  let growth = 0;
  const pay: Pay = async (_bound, write) => {
    const paid = await write();
    if (paid) growth += paid.growth;
    return paid ? paid.result : null;
  };
  const settle = async (tx: Tx) => {
    // The bound missed (a write grew more than its estimate): the rest, reserved in the
    // transaction itself. Not from this node's allowance: that would need a second connection
    // of the project inside this call (db/pool.ts), and this is rare.
    if (growth > take && (await reserve(tx, counter, growth - take, limit)) === null) throw DataErrors.database_limit();
  };
  let unused = take;
  try {
    const result = await run(pay, settle);
    // Committed: a net shrink joins the allowance, as in paidFor.
    unused = take - growth;
    return result;
  } finally {
    await giveBack(ctx, counter, unused, (trim) => ctx.db.read(scope, trim));
  }
}
