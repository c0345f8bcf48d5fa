/**
 * Bulk delete/restore of selected documents: each id goes through the single-document
 * service (same checks, same quota refunds), and each gets its own result, so one missing or
 * conflicting document does not hide what happened to the others.
 */
import type { AppContext } from '../../../context.js';
import { AppError } from '../../../lib/errors.js';
import { deleteDocument, restoreDocument } from '../write-service.js';
import type { OperatorTarget } from './target.js';

export interface BulkResult {
  done: string[];
  failed: Array<{ id: string; code: string; message: string }>;
}

async function eachId(ids: string[], fn: (id: string) => Promise<unknown>): Promise<BulkResult> {
  const result: BulkResult = { done: [], failed: [] };
  for (const id of new Set(ids)) {
    try {
      await fn(id);
      result.done.push(id);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      result.failed.push({ id, code: err.code, message: err.message });
    }
  }
  return result;
}

export function bulkDelete(ctx: AppContext, t: OperatorTarget, ids: string[], hard: boolean): Promise<BulkResult> {
  return eachId(ids, (id) => deleteDocument(ctx, t.col, t.access, id, hard));
}

export function bulkRestore(ctx: AppContext, t: OperatorTarget, ids: string[]): Promise<BulkResult> {
  return eachId(ids, (id) => restoreDocument(ctx, t.col, t.access, id));
}
