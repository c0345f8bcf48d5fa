/**
 * Data writes sent with an `Idempotency-Key` (docs/data.md "Retries: Idempotency-Key"): the
 * write, its answer and the key in ONE transaction (../idempotency/service.ts), paid like a
 * batch (quota taken before the transaction, settled in it). Without a key, writes keep their
 * cheaper path (write-service.ts: a create or an update is one autocommit statement).
 */
import type { AppContext } from '../../context.js';
import type { TenantScope, Tx } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import type { CollectionDef } from '../collections/cache.js';
import { once, type Answer, type KeyedRequest, type Response } from '../idempotency/service.js';
import { assertHardDeleteAllowed, type Access } from './access.js';
import { batchPlan, beforeWriteBatch, inTransaction, runOperations, writeBound, type BatchOperation, type BatchTarget } from './batch-service.js';
import type { Pay } from './quota.js';
import { afterBulkWrite } from './fresh-stats.js';
import { checkId } from './query.js';
import { hardDeleteOne, insertMany, insertOne, prepareMany, restoreOne, softDeleteOne, updateOne } from './write-service.js';
import { beforeWrite, beforeWriteMany } from './before-write.js';
import type { Precondition } from './etag.js';

/** The request's key, and how the route answers the write's result (stored with the key). */
export interface Keyed<T> {
  keyed: KeyedRequest;
  respond: (result: T) => Response;
}

async function writeOnce<T>(
  ctx: AppContext, scope: TenantScope, bound: number, limit: number, k: Keyed<T>, write: (tx: Tx, pay: Pay) => Promise<T>,
): Promise<Answer> {
  const attempt = (b: number) =>
    inTransaction(ctx, scope, b, limit, (tx, pay) => once(ctx, tx, scope.projectId, k.keyed, async () => k.respond(await write(tx, pay))));
  try {
    return await attempt(bound);
  } catch (err) {
    // The quota is taken before the transaction, so a project now full would refuse even the
    // replay of a write it stored. Once more, paying inside the transaction after the key is read.
    if (bound > 0 && err instanceof AppError && err.code === 'database_limit') return attempt(0);
    throw err;
  }
}

export async function createOnce(ctx: AppContext, col: CollectionDef, access: Access, input: unknown, limit: number, k: Keyed<Record<string, unknown>>) {
  const body = await beforeWrite(ctx, col, access, 'create', input);
  return writeOnce(ctx, access.scope, writeBound(col, body), limit, k, (tx, pay) => insertOne(ctx, tx, col, access, body, pay));
}

export async function createManyOnce(ctx: AppContext, col: CollectionDef, access: Access, input: unknown, limit: number, k: Keyed<{ insertedCount: number; insertedIds: string[] }>) {
  const { rows, bound } = prepareMany(col, access, await beforeWriteMany(ctx, col, access, input));
  const answer = await writeOnce(ctx, access.scope, bound, limit, k, (tx, pay) => insertMany(ctx, tx, col, rows, bound, pay, access));
  if (!answer.replayed) afterBulkWrite(ctx, col.id, rows.length);
  return answer;
}

export async function updateOnce(
  ctx: AppContext, col: CollectionDef, access: Access, id: string, input: unknown, limit: number, k: Keyed<Record<string, unknown>>, ifMatch?: Precondition | null,
) {
  const body = await beforeWrite(ctx, col, access, 'update', input, id);
  return writeOnce(ctx, access.scope, writeBound(col, body), limit, k, (tx, pay) => updateOne(ctx, tx, col, access, id, body, pay, ifMatch));
}

/** Deletes and restores never grow the project: no quota is taken (limit unused). */
export async function deleteOnce(
  ctx: AppContext, col: CollectionDef, access: Access, id: string, hard: boolean, k: Keyed<{ id: string }>, ifMatch?: Precondition | null,
) {
  checkId(id);
  if (hard) assertHardDeleteAllowed(access);
  await beforeWrite(ctx, col, access, 'delete', undefined, id);
  return writeOnce(ctx, access.scope, 0, 0, k, (tx) => (hard ? hardDeleteOne(tx, col, access, id, ifMatch) : softDeleteOne(ctx, tx, col, access, id, ifMatch)));
}

export function restoreOnce(ctx: AppContext, col: CollectionDef, access: Access, id: string, k: Keyed<Record<string, unknown>>, ifMatch?: Precondition | null) {
  return writeOnce(ctx, access.scope, 0, 0, k, (tx) => restoreOne(ctx, tx, col, access, id, ifMatch));
}

export async function batchOnce(
  ctx: AppContext, input: BatchOperation[], targets: ReadonlyMap<string, BatchTarget>, limit: number, k: Keyed<Awaited<ReturnType<typeof runOperations>>>,
) {
  batchPlan(input, targets); // an empty or too long batch is refused before any hook runs
  const ops = await beforeWriteBatch(ctx, input, targets);
  const { scope, bound } = batchPlan(ops, targets);
  return writeOnce(ctx, scope, bound, limit, k, (tx, pay) => runOperations(ctx, tx, ops, targets, pay));
}
