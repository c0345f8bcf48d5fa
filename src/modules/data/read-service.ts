/** Reads: list (offset or keyset), count, get by id. Knows no HTTP. */
import { sql } from 'kysely';
import type { AppContext } from '../../context.js';
import { sqlState } from '../../db/errors.js';
import type { Tx } from '../../db/pool.js';
import type { CollectionDef } from '../collections/cache.js';
import { docScope, listRuleCondition, type Access } from './access.js';
import { encodeCursor, keysetCondition } from './cursor.js';
import { DataErrors } from './errors.js';
import { etagOf } from './etag.js';
import { guardDb } from './pg-errors.js';
import { populate } from './populate.js';
import { countRows, getViewRow, listRows, setStatementTimeout } from './queries.js';
import { checkId, type Filter, type ListQuery } from './query.js';
import { documentJson, documentView, shape, type DocumentRow, type DocumentTextRow } from './view.js';
import { and, filterConditions, hasRegex, orderBy, searchPlan, type OrderPlan, type SearchPlan } from './where.js';

const LIST_TIMEOUT_MS = 5000;
export const REGEX_TIMEOUT_MS = 2000;
const DEEP_OFFSET = 10_000;

/**
 * Queries that can run long (a regex, a deep offset) get a statement timeout, which needs a
 * transaction; the others are index scans bounded by `limit` and run as plain autocommit
 * reads (one round trip each). Never longer than the publishable-key timeout every pk scope
 * already runs with (PUBLISHABLE_STATEMENT_TIMEOUT_MS, src/db/pool.ts).
 */
function timeoutFor(ctx: AppContext, access: Access, q: ListQuery): number | null {
  const ms = hasRegex(q.filters) ? REGEX_TIMEOUT_MS : q.offset > DEEP_OFFSET ? LIST_TIMEOUT_MS : null;
  if (ms === null || access.scope.keyKind !== 'publishable') return ms;
  return Math.min(ms, ctx.config.tenantDb.publishableStatementTimeoutMs);
}

/**
 * What PostgreSQL's regex engine answers to a pattern it cannot afford (nested bounded repeats:
 * "invalid memory alloc request size", out of memory, too complex, stack depth).
 */
const REGEX_EXHAUSTION = new Set(['XX000', '53200', '54000', '54001']);

function inScope<T>(ctx: AppContext, access: Access, q: ListQuery, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const ms = timeoutFor(ctx, access, q);
  if (ms === null) return ctx.db.replicaRead(access.scope, fn, access.after);
  return ctx.db
    .tenant(access.scope, async (tx) => {
      await setStatementTimeout(tx, ms);
      return fn(tx);
    })
    .catch((err) => {
      throw regexExhausted(q.filters, err);
    });
}

/** A regex filter PostgreSQL could not afford is the client's 400; anything else is unchanged. */
export function regexExhausted(filters: Filter[], err: unknown): unknown {
  if (hasRegex(filters) && REGEX_EXHAUSTION.has(String(sqlState(err)))) return DataErrors.invalid_query('Regex pattern is too complex.');
  return err;
}

const paths = (fields: string[] | null) => (fields ? fields.map((f) => f.split('.')) : null);

/**
 * The list's conditions: its filters, with `search` the full-text match, and under access rules
 * whose `view` and `list` differ, the `list` rule (the policy holds `view`; docs/rules.md).
 */
function conditionsOf(col: CollectionDef, q: ListQuery, search: SearchPlan | null, access?: Access) {
  const conditions = filterConditions(col, q.filters);
  const listRule = access ? listRuleCondition(col, access) : null;
  if (listRule) conditions.push(listRule);
  return search ? [...conditions, search.condition] : conditions;
}

/**
 * The page order: the requested sort; with a search and no sort, by relevance (offset pages;
 * cursor pages keep the default newest-first order, which a cursor can follow).
 */
function orderOf(col: CollectionDef, q: ListQuery, search: SearchPlan | null, cursorMode: boolean): OrderPlan {
  const order = orderBy(col, cursorMode ? q.sort.slice(0, 1) : q.sort);
  if (!search || cursorMode || q.sort.length) return order;
  return { keys: order.keys, sql: sql`${search.rank} DESC, ${order.sql}` };
}

export async function countDocuments(ctx: AppContext, col: CollectionDef, access: Access, q: ListQuery): Promise<number> {
  const where = and(conditionsOf(col, q, searchPlan(col, q.search), access));
  return guardDb(() => inScope(ctx, access, q, (tx) => countRows(tx, docScope(col, access, q.includeDeleted), where)));
}

/**
 * `total` without counting when the page shows it: an offset page that reaches the end of the
 * matches (it fetches one row more than `limit`, so it knows) and is not past it. Anything else
 * is `null` unless the caller asked with `include_total=true`: an exact count visits every match,
 * which on a large collection costs far more than the page (docs/data.md "Totals").
 */
function freeTotal(q: ListQuery, fetched: number): number | null {
  if (fetched > q.limit) return null;
  return fetched > 0 || q.offset === 0 ? q.offset + fetched : null;
}

/**
 * Whether a read can go out as PostgreSQL wrote its documents (view.ts, `documentJson`): no
 * `fields` projection and no `populate`, which work on parsed documents.
 */
export const asWritten = (q: ListQuery): boolean => q.fields === null && q.populate.length === 0;

interface Page<T> {
  items: T[];
  total: number | null;
  more: boolean;
  /** The last row of the page (for the next cursor). */
  last?: { id: string; sort_value?: string | null };
}

/**
 * One page of the list: its rows (as JSON text with `asText`) turned into items by `render`,
 * inside the read's scope (populate reads more in it).
 */
async function readPage<R extends DocumentRow | DocumentTextRow, T>(
  ctx: AppContext, col: CollectionDef, access: Access, q: ListQuery, asText: boolean,
  render: (tx: Tx, rows: R[]) => Promise<T[]> | T[],
): Promise<Page<T>> {
  const search = searchPlan(col, q.search);
  const conditions = conditionsOf(col, q, search, access);
  const scope = docScope(col, access, q.includeDeleted);
  const cursorMode = q.cursor !== undefined;
  const order = orderOf(col, q, search, cursorMode);
  const first = order.keys[0]!;
  const keyset = cursorMode ? keysetCondition(q.cursor, first.ref, first.desc) : null;
  return guardDb(() =>
    inScope(ctx, access, q, async (tx) => {
      const rows = (await listRows(tx, scope, and(keyset ? [...conditions, keyset] : conditions), order.sql, {
        limit: q.limit + 1,
        offset: cursorMode ? 0 : q.offset,
        sortText: cursorMode ? sql`(${first.ref.expr})::text` : undefined,
        withTotal: q.includeTotal && !cursorMode,
        asText,
      })) as Array<R & { sort_value?: string | null; total?: number }>;
      // Asked for: the page query carries the total (a sub-select) for offset pages; a cursor's
      // total ignores the keyset condition, and a page past the end has no row to carry it.
      const total = !q.includeTotal
        ? cursorMode ? null : freeTotal(q, rows.length)
        : (rows[0]?.total ?? (await countRows(tx, scope, and(conditions))));
      const more = rows.length > q.limit;
      const page = more ? rows.slice(0, q.limit) : rows;
      return { items: await render(tx, page), total, more, last: page[page.length - 1] };
    }),
  );
}

const nextCursorOf = (page: Page<unknown>) => (page.more && page.last ? encodeCursor(page.last.sort_value ?? null, page.last.id) : null);

export async function listDocuments(ctx: AppContext, col: CollectionDef, access: Access, q: ListQuery) {
  const page = await readPage<DocumentRow, Record<string, unknown>>(ctx, col, access, q, false, async (tx, rows) => {
    const items = rows.map(documentView);
    await populate(ctx, tx, col, items, q.populate, access.secret);
    const fields = paths(q.fields);
    return items.map((d) => shape(d, fields, q.meta));
  });
  if (q.cursor === undefined) return { items: page.items, total: page.total, page: q.page, limit: q.limit };
  return { items: page.items, total: page.total, cursor: q.cursor || null, nextCursor: nextCursorOf(page), limit: q.limit };
}

/**
 * `listDocuments`' answer as JSON text, for a query that is `asWritten`: the same members in
 * the same order, each document spliced from PostgreSQL's text of it.
 */
export async function listDocumentsJson(ctx: AppContext, col: CollectionDef, access: Access, q: ListQuery): Promise<string> {
  const page = await readPage<DocumentTextRow, string>(ctx, col, access, q, true, (_tx, rows) => rows.map((r) => documentJson(r, q.meta)));
  const head = `{"items":[${page.items.join(',')}],"total":${JSON.stringify(page.total)},`;
  if (q.cursor === undefined) return `${head}"page":${q.page},"limit":${q.limit}}`;
  return `${head}"cursor":${JSON.stringify(q.cursor || null)},"nextCursor":${JSON.stringify(nextCursorOf(page))},"limit":${q.limit}}`;
}

export async function getDocument(ctx: AppContext, col: CollectionDef, access: Access, id: string, q: ListQuery) {
  return (await getDocumentTagged(ctx, col, access, id, q)).doc;
}

/** `getDocument` with the document's ETag (etag.ts), from the columns the read returns anyway. */
export async function getDocumentTagged(ctx: AppContext, col: CollectionDef, access: Access, id: string, q: ListQuery) {
  checkId(id);
  return guardDb(() =>
    ctx.db.replicaRead(access.scope, async (tx) => {
      const row = (await getViewRow(tx, docScope(col, access, q.includeDeleted), id, false)) as DocumentRow | undefined;
      if (!row) throw DataErrors.document_not_found();
      const doc = documentView(row);
      await populate(ctx, tx, col, [doc], q.populate, access.secret);
      return { doc: shape(doc, paths(q.fields), q.meta), etag: etagOf(row.id, row.updated_at_ms) };
    }, access.after),
  );
}

/** `getDocumentTagged`'s answer as JSON text, for a query that is `asWritten`. */
export async function getDocumentJson(ctx: AppContext, col: CollectionDef, access: Access, id: string, q: ListQuery): Promise<{ json: string; etag: string }> {
  checkId(id);
  return guardDb(() =>
    ctx.db.replicaRead(access.scope, async (tx) => {
      const row = (await getViewRow(tx, docScope(col, access, q.includeDeleted), id, true)) as DocumentTextRow | undefined;
      if (!row) throw DataErrors.document_not_found();
      return { json: documentJson(row, q.meta), etag: etagOf(row.id, row.updated_at_ms) };
    }, access.after),
  );
}
