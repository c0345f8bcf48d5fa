/**
 * Group commit for the upload hot path (src/lib/coalescer.ts): concurrent upload requests of
 * one tenant scope insert their pending rows in one statement, and concurrent confirmations
 * confirm in one. A key holds everything a batch's statement shares (scope, project, owner,
 * provider, limit), so only calls that would have run the same statement with different rows
 * are ever batched together.
 */
import type { Db, TenantScope } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { Coalescer } from '../../lib/coalescer.js';
import { confirmPending, insertPending, type ConfirmBatch, type FileRow, type PendingBatch, type PendingFile } from './queries.js';

interface Keyed<B> {
  scope: TenantScope;
  batch: B;
}

type RequestKey = Keyed<PendingBatch>;
type ConfirmKey = Keyed<ConfirmBatch>;
interface Confirmation {
  path: string;
  size: number;
}

const keyString = (k: Keyed<unknown>) => JSON.stringify(k);

/** What these use of the AppContext, named here: context.ts lists the batchers (no import cycle). */
interface BatcherContext {
  db: Db;
  clock: Clock;
}
type UploadsContext = { storage: { uploads: UploadBatchers } };

function requestBatcher(ctx: BatcherContext) {
  return new Coalescer<RequestKey, PendingFile, boolean>(async (key, files) => {
    const inserted = await ctx.db.read(key.scope, (db) => insertPending(db, key.batch, files));
    return files.map((f) => inserted.has(f.id));
  }, keyString);
}

function confirmBatcher(ctx: BatcherContext) {
  return new Coalescer<ConfirmKey, Confirmation, FileRow | undefined>(async (key, files) => {
    const rows = await ctx.db.read(key.scope, (db) => confirmPending(db, key.batch, files, ctx.clock.now()));
    const byPath = new Map(rows.map((r) => [r.path, r]));
    return files.map((f) => {
      const row = byPath.get(f.path);
      return row?.size === f.size ? row : undefined;
    });
  }, keyString);
}

export interface UploadBatchers {
  request: ReturnType<typeof requestBatcher>;
  confirm: ReturnType<typeof confirmBatcher>;
}

/** The node's upload group commits, built once at start-up (src/boot.ts). */
export function createUploadBatchers(ctx: BatcherContext): UploadBatchers {
  return { request: requestBatcher(ctx), confirm: confirmBatcher(ctx) };
}

/** Inserts a pending upload; false when the project's storage headroom does not allow it. */
export function insertPendingFile(ctx: UploadsContext, key: RequestKey, file: PendingFile): Promise<boolean> {
  return ctx.storage.uploads.request.submit(key, file);
}

/** Charges and confirms a pending upload: its row (still pending: over the quota), or undefined. */
export function confirmPendingFile(ctx: UploadsContext, key: ConfirmKey, file: Confirmation): Promise<FileRow | undefined> {
  return ctx.storage.uploads.confirm.submit(key, file);
}
