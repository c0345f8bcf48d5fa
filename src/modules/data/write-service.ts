/**
 * Writes: create, bulk create, merge update, soft/hard delete, restore. Knows no HTTP.
 * Each single write is an exported `…One` function over a given connection and a way to pay
 * (`Pay`), so a batch (batch-service.ts) runs the very same checks inside one transaction.
 * Creates, top-level patches, soft deletes and restores are autocommit statements; other
 * updates use optimistic concurrency (a version check) instead of a row lock; only a hard
 * delete, which refunds its bytes, needs a transaction. Quota accounting is in ./quota.ts.
 */
import { afterBulkWrite } from './fresh-stats.js';
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { objectId } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/objects.js';
import { refund } from '../../lib/quota-queries.js';
import type { CollectionDef } from '../collections/cache.js';
import { validateDocument } from '../collections/validate.js';
import { applyOwnerOnCreate, assertHardDeleteAllowed, assertOwner, assertOwnerUnchanged, docScope, ownerOf, type Access } from './access.js';
import { beforeWrite, beforeWriteMany } from './before-write.js';
import { assertSafe, mergeUpdate, withoutSystemFields } from './body.js';
import { DataErrors } from './errors.js';
import { RuleErrors } from '../rules/errors.js';
import { guardDb } from './pg-errors.js';
import { dbBytes, payEach, sizeBound, type Pay } from './quota.js';
import * as q from './queries.js';
import { checkId } from './query.js';
import { documentView } from './view.js';
import { preconditionFailed, satisfies, type Precondition } from './etag.js';
import { withoutHidden } from '../collections/protection.js';

const BULK_MAX = 100;

/**
 * What a writer gets back of a document's fields: hidden ones (docs/rules.md) only as a reader
 * would. Owner-hidden values are read back by a function that sees the statement's snapshot,
 * before the write, so the written document is shaped here instead.
 */
function visible(col: CollectionDef, access: Access, ownerId: string | null, data: Record<string, unknown>) {
  if (access.secret) return data;
  return withoutHidden(col.fields, data, ownerId !== null && ownerId === access.userId);
}

/**
 * With the publishable key, reads the row first and checks its owner: the write alone would
 * pass the write policy too, so another owner's row would look missing (404) where the
 * SDK expects 403 (docs/wire-compatibility.md §4.5). The write that follows is still guarded by the policy.
 */
async function checkOwner(db: Tx, s: q.Scope, access: Access, id: string): Promise<void> {
  if (access.secret) return;
  const seen = await q.getRow(db, s, id);
  if (!seen) throw DataErrors.document_not_found();
  assertOwner(access, seen.owner_id);
}

/** Validates one new document; returns the row to insert or the validator's message. */
function prepare(col: CollectionDef, access: Access, body: unknown, index: number): q.NewRow | string {
  if (!isPlainObject(body)) return `Item at index ${index} must be a valid object`;
  assertSafe(body);
  const doc = withoutSystemFields(body);
  applyOwnerOnCreate(col, access, doc, index);
  const checked = validateDocument(col.fields, doc, 'insert');
  if (!checked.ok) return checked.message;
  const id = objectId();
  const json = JSON.stringify(checked.value);
  return { id, ownerId: ownerOf(col, id, checked.value), data: checked.value, json };
}

export async function createDocument(ctx: AppContext, col: CollectionDef, access: Access, input: unknown, limit: number) {
  const body = await beforeWrite(ctx, col, access, 'create', input);
  return guardDb(() => ctx.db.read(access.scope, (db) => insertOne(ctx, db, col, access, body, payEach(ctx, db, col.project_id, limit))));
}

/** Validates and inserts one document on `db`, paid by `pay`. */
export async function insertOne(ctx: AppContext, db: Tx, col: CollectionDef, access: Access, body: unknown, pay: Pay) {
  if (!isPlainObject(body)) throw DataErrors.invalid_body('Request body must be a JSON object.');
  const row = prepare(col, access, body, 0);
  if (typeof row === 'string') throw DataErrors.document_invalid(row);
  const now = ctx.clock.now();
  await pay(sizeBound(row.json), async () => {
    const [r] = await q.insertRows(db, col.project_id, col.id, [row], now, !!access.rules);
    return { result: r!, growth: r!.size_bytes };
  });
  // The stored document is exactly these values (the insert sets both timestamps to `now`).
  return documentView({ id: row.id, data: visible(col, access, row.ownerId, row.data), created_at_ms: now.getTime(), updated_at_ms: now.getTime(), deleted_at_ms: null });
}

/** Validates a bulk create's body: the rows to insert (all valid) and the quota they may take. */
export function prepareMany(col: CollectionDef, access: Access, body: unknown): { rows: q.NewRow[]; bound: number } {
  if (!Array.isArray(body)) throw DataErrors.invalid_body('Request body must be an array of objects');
  if (body.length === 0) throw DataErrors.invalid_body('Request body cannot be empty');
  if (body.length > BULK_MAX) throw DataErrors.invalid_body(`Maximum ${BULK_MAX} records allowed`);
  const rows = body.map((item, i) => prepare(col, access, item, i));
  const bad = rows.map((r, i) => (typeof r === 'string' ? i : -1)).filter((i) => i >= 0);
  if (bad.length) {
    throw DataErrors.document_invalid(`Invalid records at index: ${bad.join(', ')}. ${String(rows[bad[0]!])}`);
  }
  const ok = rows as q.NewRow[];
  return { rows: ok, bound: ok.reduce((n, r) => n + sizeBound(r.json), 0) };
}

/** Inserts prepared rows with one multi-row INSERT (all or nothing even without a transaction), paid by `pay`. */
export async function insertMany(ctx: AppContext, db: Tx, col: CollectionDef, rows: q.NewRow[], bound: number, pay: Pay, access?: Access) {
  const stored = (await pay(bound, async () => {
    const inserted = await q.insertRows(db, col.project_id, col.id, rows, ctx.clock.now(), !!access?.rules);
    return { result: inserted, growth: inserted.reduce((n, r) => n + r.size_bytes, 0) };
  }))!;
  return { insertedCount: stored.length, insertedIds: stored.map((s) => s.id) };
}

export async function createMany(ctx: AppContext, col: CollectionDef, access: Access, input: unknown, limit: number) {
  const { rows, bound } = prepareMany(col, access, await beforeWriteMany(ctx, col, access, input));
  const result = await guardDb(() => ctx.db.read(access.scope, (db) => insertMany(ctx, db, col, rows, bound, payEach(ctx, db, col.project_id, limit), access)));
  afterBulkWrite(ctx, col.id, result.insertedCount);
  return result;
}

const UPDATE_ATTEMPTS = 5;

export async function updateDocument(
  ctx: AppContext, col: CollectionDef, access: Access, id: string, input: unknown, limit: number, ifMatch?: Precondition | null,
) {
  const body = await beforeWrite(ctx, col, access, 'update', input, id);
  return guardDb(() => ctx.db.read(access.scope, (db) => updateOne(ctx, db, col, access, id, body, payEach(ctx, db, col.project_id, limit), ifMatch)));
}

/**
 * Merges `body` into one document on `db` (optimistic retries), paid by `pay`; with `ifMatch`,
 * only into the version it names (412 otherwise).
 */
export async function updateOne(ctx: AppContext, db: Tx, col: CollectionDef, access: Access, id: string, body: unknown, pay: Pay, ifMatch?: Precondition | null) {
  checkId(id);
  if (!isPlainObject(body)) throw DataErrors.invalid_body('Request body must be a JSON object.');
  assertSafe(body);
  if (access.secret && !Object.keys(body).some((k) => k.includes('.'))) return patchTopLevel(ctx, db, col, access, id, body, pay, ifMatch);
  for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
    const stored = await tryUpdate(ctx, db, col, access, id, body, pay, ifMatch);
    if (stored) return documentView({ ...stored, data: visible(col, access, stored.owner_id, stored.data) });
  }
  throw DataErrors.write_conflict();
}

/**
 * The common update (secret key, top-level keys only) as one statement: validate the new
 * values, then `data || patch` in PostgreSQL, which is exactly the merge for top-level keys.
 */
async function patchTopLevel(
  ctx: AppContext, db: Tx, col: CollectionDef, access: Access, id: string, body: Record<string, unknown>, pay: Pay, ifMatch?: Precondition | null,
) {
  const checked = validateDocument(col.fields, withoutSystemFields(body), 'update');
  if (!checked.ok) throw DataErrors.document_invalid(checked.message);
  const patch = checked.value;
  const field = col.rls.ownerField;
  const ownerId = field !== '_id' && field in patch ? ownerOf(col, id, patch) : undefined;
  const json = JSON.stringify(patch);
  const now = ctx.clock.now();
  const stored = await pay(sizeBound(json), async () => {
    const row = await q.patchRow(db, docScope(col, access), id, { json, ownerId }, now, ifMatch);
    if (!row) {
      await assertPrecondition(db, docScope(col, access), id, ifMatch);
      throw DataErrors.document_not_found();
    }
    return { result: row, growth: row.growth };
  });
  return documentView({ id, data: stored!.data, created_at_ms: stored!.created_at_ms, updated_at_ms: stored!.updated_at_ms, deleted_at_ms: null });
}

/**
 * After a conditional write that touched no row: 412 when the document is there at another
 * version (the precondition, not its absence, stopped the write). Nothing without a precondition.
 */
async function assertPrecondition(db: Tx, s: q.Scope, id: string, ifMatch: Precondition | null | undefined): Promise<void> {
  if (!ifMatch) return;
  const row = await q.getRow(db, s, id);
  if (row && !satisfies(ifMatch, row.updated_at_ms)) throw preconditionFailed(id, row.updated_at_ms);
}

/** One optimistic attempt: read, merge, validate, write if unchanged meanwhile (else null). */
async function tryUpdate(
  ctx: AppContext, db: Tx, col: CollectionDef, access: Access, id: string, body: Record<string, unknown>, pay: Pay, ifMatch?: Precondition | null,
) {
  const current = await q.getRow(db, docScope(col, access), id);
  if (!current) throw DataErrors.document_not_found();
  assertOwner(access, current.owner_id);
  if (!satisfies(ifMatch, current.updated_at_ms)) throw preconditionFailed(id, current.updated_at_ms);
  const { doc, touched } = mergeUpdate(current.data, body);
  const partial = Object.fromEntries([...touched].map((k) => [k, doc[k]]));
  const checked = validateDocument(col.fields, partial, 'update');
  if (!checked.ok) throw DataErrors.document_invalid(checked.message);
  Object.assign(doc, checked.value);
  const ownerId = ownerOf(col, id, doc);
  assertOwnerUnchanged(col, access, current.owner_id, ownerId);
  const json = JSON.stringify(doc);
  return pay(sizeBound(json) - current.size_bytes, async () => {
    const row = await q.updateRow(db, docScope(col, access), id, current.version, { ownerId, json }, ctx.clock.now(), ifMatch);
    if (!row) await assertNotRefused(db, col, access, id, current.version);
    // The document as written (`doc`), not as RETURNING saw it: see `visible`.
    return row ? { result: { ...row, data: doc }, growth: row.size_bytes - current.size_bytes } : null;
  });
}

/**
 * Under access rules a write that touched nothing, of a row the caller sees unchanged, was
 * refused by the update (or delete) rule's USING: 403, not a conflict to retry or a 404.
 */
async function assertNotRefused(db: Tx, col: CollectionDef, access: Access, id: string, version: number | null): Promise<void> {
  if (!access.rules) return;
  const again = await q.getRow(db, docScope(col, access, true), id);
  if (again && (version === null || again.version === version)) throw RuleErrors.rule_denied();
}

export async function deleteDocument(ctx: AppContext, col: CollectionDef, access: Access, id: string, hard: boolean, ifMatch?: Precondition | null) {
  checkId(id);
  await beforeWrite(ctx, col, access, 'delete', undefined, id);
  if (hard) {
    assertHardDeleteAllowed(access);
    return guardDb(() => ctx.db.tenant(access.scope, (tx) => hardDeleteOne(tx, col, access, id, ifMatch)));
  }
  return guardDb(() => ctx.db.read(access.scope, (db) => softDeleteOne(ctx, db, col, access, id, ifMatch)));
}

/** Marks one document deleted (its bytes stay charged until a hard delete); with `ifMatch`, only the version it names. */
export async function softDeleteOne(ctx: AppContext, db: Tx, col: CollectionDef, access: Access, id: string, ifMatch?: Precondition | null) {
  checkId(id);
  const s = docScope(col, access);
  await checkOwner(db, s, access, id);
  const now = ctx.clock.now();
  if (!(await q.setDeleted(db, s, id, now, now, ifMatch))) {
    await assertPrecondition(db, s, id, ifMatch);
    await assertNotRefused(db, col, access, id, null);
    throw DataErrors.document_not_found();
  }
  return { id };
}

/** Purges a live or soft-deleted document (secret key only) and frees its bytes; `tx` must be a transaction. */
export async function hardDeleteOne(tx: Tx, col: CollectionDef, access: Access, id: string, ifMatch?: Precondition | null) {
  checkId(id);
  assertHardDeleteAllowed(access);
  const gone = await q.hardDelete(tx, docScope(col, access, true), id, ifMatch);
  if (!gone) {
    await assertPrecondition(tx, docScope(col, access, true), id, ifMatch);
    throw DataErrors.document_not_found();
  }
  await refund(tx, dbBytes(col.project_id), gone.size_bytes);
  return { id };
}

/** Brings a soft-deleted document back (409 when its unique values were taken meanwhile). */
export async function restoreDocument(ctx: AppContext, col: CollectionDef, access: Access, id: string, ifMatch?: Precondition | null) {
  return guardDb(() => ctx.db.read(access.scope, (db) => restoreOne(ctx, db, col, access, id, ifMatch)));
}

export async function restoreOne(ctx: AppContext, db: Tx, col: CollectionDef, access: Access, id: string, ifMatch?: Precondition | null) {
  checkId(id);
  const s = docScope(col, access, true);
  const current = await q.getRow(db, s, id);
  if (!current) throw DataErrors.document_not_found();
  assertOwner(access, current.owner_id);
  if (!satisfies(ifMatch, current.updated_at_ms)) throw preconditionFailed(id, current.updated_at_ms);
  if (current.deleted_at_ms === null) return documentView(current);
  const restored = await q.setDeleted(db, s, id, null, ctx.clock.now(), ifMatch);
  if (!restored) {
    await assertPrecondition(db, s, id, ifMatch);
    await assertNotRefused(db, col, access, id, null);
    throw DataErrors.document_not_found();
  }
  return documentView(restored);
}
