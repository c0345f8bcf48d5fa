/**
 * Atomic batch (POST /api/data/batch): 1-100 create/update/delete/restore operations across
 * the project's collections in one transaction, all or nothing. Each operation runs the same
 * `…One` function as its single call (schema, unique values, RLS owner rules), and the batch
 * pays its quota once (`paidForAll`). A failure names the operation and rolls everything back.
 * Knows no HTTP: the caller resolves each collection and its access first.
 */
import type { AppContext } from '../../context.js';
import type { TenantScope, Tx } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import type { CollectionDef } from '../collections/cache.js';
import type { Access } from './access.js';
import { DataErrors } from './errors.js';
import { guardDb } from './pg-errors.js';
import { paidForAll, sizeBound, type Pay } from './quota.js';
import { hardDeleteOne, insertOne, restoreOne, softDeleteOne, updateOne } from './write-service.js';
import { beforeWrite } from './before-write.js';
import { parseIfMatch } from './etag.js';

export const BATCH_MAX = 100;

export interface BatchOperation {
  op: 'create' | 'update' | 'delete' | 'restore';
  collection: string;
  id?: string;
  data?: unknown;
  hard?: boolean;
  /** update, delete, restore: the `If-Match` of the single call (etag.ts). */
  ifMatch?: string;
}

export interface BatchTarget {
  col: CollectionDef;
  access: Access;
}

export interface BatchResult {
  op: BatchOperation['op'];
  collection: string;
  id: string;
  data?: unknown;
}

/** What a write may add beyond its own JSON: the owner field filled in and the schema's defaults. */
function filledIn(col: CollectionDef): Record<string, unknown> {
  const extra: Record<string, unknown> = { [col.rls.ownerField]: '0'.repeat(24) };
  for (const f of col.fields) if (f.default !== undefined) extra[f.key] = f.default;
  return extra;
}

/** What one create or update may grow the project by: its JSON plus what the server fills in. */
export function writeBound(col: CollectionDef, data: unknown): number {
  const json = typeof data === 'object' && data !== null ? data : {};
  return sizeBound(JSON.stringify(json)) + sizeBound(JSON.stringify(filledIn(col)));
}

/**
 * What the whole batch may grow the project by: the bound of each create and update.
 * Taken before the transaction; `paidForAll` tops up the rare rest.
 */
function budget(ops: BatchOperation[], targets: ReadonlyMap<string, BatchTarget>): number {
  return ops.reduce((n, o) => (o.op === 'create' || o.op === 'update' ? n + writeBound(targets.get(o.collection)!.col, o.data) : n), 0);
}

/** `run` in one tenant transaction, its writes paid from `bound` taken before it (paidForAll). */
export function inTransaction<T>(ctx: AppContext, scope: TenantScope, bound: number, limit: number, run: (tx: Tx, pay: Pay) => Promise<T>): Promise<T> {
  return guardDb(() =>
    paidForAll(ctx, scope, bound, limit, (pay, settle) =>
      ctx.db.tenant(scope, async (tx) => {
        const result = await run(tx, pay);
        await settle(tx);
        return result;
      }),
    ),
  );
}

async function runOne(ctx: AppContext, tx: Tx, t: BatchTarget, o: BatchOperation, pay: Pay): Promise<BatchResult> {
  const base = { op: o.op, collection: o.collection };
  const ifMatch = o.op === 'create' ? null : parseIfMatch(o.ifMatch, o.id ?? '');
  switch (o.op) {
    case 'create': {
      const doc = await insertOne(ctx, tx, t.col, t.access, o.data, pay);
      return { ...base, id: String(doc._id), data: doc };
    }
    case 'update': {
      const doc = await updateOne(ctx, tx, t.col, t.access, o.id ?? '', o.data, pay, ifMatch);
      return { ...base, id: String(doc._id), data: doc };
    }
    case 'delete':
      return { ...base, ...(o.hard ? await hardDeleteOne(tx, t.col, t.access, o.id ?? '', ifMatch) : await softDeleteOne(ctx, tx, t.col, t.access, o.id ?? '', ifMatch)) };
    case 'restore': {
      const doc = await restoreOne(ctx, tx, t.col, t.access, o.id ?? '', ifMatch);
      return { ...base, id: String(doc._id), data: doc };
    }
  }
}

/** The operation's own error, with its position and what it was, so the client can fix it. */
export function named(err: unknown, index: number, o: BatchOperation): unknown {
  if (!(err instanceof AppError)) return err;
  const what = `${o.op} ${o.collection}${o.id ? `/${o.id}` : ''}`;
  return err.withMessage(`Operation ${index} (${what}): ${err.message}`, { ...err.extra, operation: index });
}

/** The batch's scope and the quota it may take; 400 when it is empty or too long. */
export function batchPlan(ops: BatchOperation[], targets: ReadonlyMap<string, BatchTarget>): { scope: TenantScope; bound: number } {
  if (ops.length === 0 || ops.length > BATCH_MAX) throw DataErrors.invalid_body(`A batch has 1 to ${BATCH_MAX} operations.`);
  return { scope: targets.get(ops[0]!.collection)!.access.scope, bound: budget(ops, targets) };
}

/** Every operation in order on `tx`; the first failure names its operation (and rolls all back). */
export async function runOperations(
  ctx: AppContext, tx: Tx, ops: BatchOperation[], targets: ReadonlyMap<string, BatchTarget>, pay: Pay,
): Promise<BatchResult[]> {
  const results: BatchResult[] = [];
  for (const [i, o] of ops.entries()) {
    try {
      results.push(await guardDb(() => runOne(ctx, tx, targets.get(o.collection)!, o, pay)));
    } catch (err) {
      throw named(err, i, o);
    }
  }
  return results;
}

export async function runBatch(
  ctx: AppContext, input: BatchOperation[], targets: ReadonlyMap<string, BatchTarget>, limit: number,
): Promise<BatchResult[]> {
  batchPlan(input, targets); // an empty or too long batch is refused before any hook runs
  const ops = await beforeWriteBatch(ctx, input, targets);
  const { scope, bound } = batchPlan(ops, targets);
  return inTransaction(ctx, scope, bound, limit, (tx, pay) => runOperations(ctx, tx, ops, targets, pay));
}

/** A batch: each create, update and delete through its collection's hooks, before the transaction. */
export async function beforeWriteBatch(ctx: AppContext, ops: BatchOperation[], targets: ReadonlyMap<string, BatchTarget>): Promise<BatchOperation[]> {
  if (!ctx.hooks.beforeWrite) return ops;
  const out: BatchOperation[] = [];
  for (const [i, o] of ops.entries()) {
    const t = targets.get(o.collection);
    if (!t || o.op === 'restore') {
      out.push(o);
      continue;
    }
    try {
      const data = await beforeWrite(ctx, t.col, t.access, o.op, o.data, o.id);
      out.push(o.op === 'delete' ? o : { ...o, data });
    } catch (err) {
      throw named(err, i, o);
    }
  }
  return out;
}
