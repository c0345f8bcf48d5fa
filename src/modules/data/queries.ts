/**
 * SQL over the documents table. Always called inside `ctx.db.tenant(...)` or `ctx.db.read(...)`,
 * so the native policies (sql/20_documents_policies.sql) apply on top of the conditions here.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Tx } from '../../db/pool.js';
import { isObjectId } from '../../lib/ids.js';
import { partitionName } from '../collections/partition-queries.js';
import type { DocumentRow, DocumentTextRow } from './view.js';
import { WHOLE_DATA_AS_DATA, WHOLE_DATA_SQL } from '../../db/whole-data.js';
import { ifMatchSql, type Precondition } from './etag.js';

export interface Scope {
  projectId: string;
  collectionId: string;
  includeDeleted: boolean;
  /** Private mode with a publishable key: only this owner's rows. */
  ownerId?: string | null;
  /**
   * Write to the collection's partition, not the parent: a collection with access rules, whose
   * write policies are on its partition (docs/rules.md).
   */
  viaPartition?: boolean;
  /**
   * The collection has hidden fields (docs/rules.md, "Field protection"), kept outside `data`:
   * `all` (secret key) reads them back in; `owner` (publishable key) only on the caller's own
   * rows, through plinth_own_private (sql/21). Absent: `data` alone.
   */
  hidden?: 'all' | 'owner';
}

export interface StoredRow extends DocumentRow {
  owner_id: string | null;
  size_bytes: number;
  version: number;
}

/**
 * Timestamps leave PostgreSQL as epoch milliseconds (int8, floored: the millisecond a JS Date of
 * the stored value holds), not as timestamptz text: parsing that text into a Date cost ~3 µs per
 * value in Node, ~130 µs of CPU for a 20-document page; a number becomes the same ISO string
 * (view.ts) for a fraction of that. The aliases differ from the column names on purpose: ORDER BY
 * `created_at` would otherwise sort by the output column, which no index serves.
 */
const ms = (col: string) => sql.raw(`floor(extract(epoch FROM ${col}) * 1000)::int8 AS ${col}_ms`);
/** A publishable caller's view of a document with hidden fields: its own rows with the owner-visible ones. */
const OWN_DATA_SQL = `CASE WHEN owner_id = plinth_user_id() THEN data || coalesce(plinth_own_private(collection_id, id), '{}') ELSE data END`;
/** The document's fields as the caller may see them (Scope.hidden). */
const DATA = {
  plain: sql.raw('data'),
  all: sql.raw(WHOLE_DATA_AS_DATA),
  owner: sql.raw(`${OWN_DATA_SQL} AS data`),
};
type DataView = keyof typeof DATA;
const dataOf = (s: Pick<Scope, 'hidden'>) => DATA[s.hidden ?? 'plain'];
/** The same, as jsonb's text (view.ts, `documentJson`): the driver leaves it unparsed. */
const DATA_TEXT = {
  plain: sql.raw('data::text AS data'),
  all: sql.raw(`(${WHOLE_DATA_SQL})::text AS data`),
  owner: sql.raw(`(${OWN_DATA_SQL})::text AS data`),
} satisfies Record<DataView, RawBuilder<unknown>>;
const timestamps = sql`${ms('created_at')}, ${ms('updated_at')}, ${ms('deleted_at')}`;
/** What a document's wire form is made of (view.ts): all that lists and populate read. Built once per view. */
const VIEW_COLUMNS = new Map(Object.entries(DATA).map(([k, d]) => [k, sql`id, ${d}, ${timestamps}`]));
const TEXT_VIEW_COLUMNS = new Map(Object.entries(DATA_TEXT).map(([k, d]) => [k, sql`id, ${d}, ${timestamps}`]));
/** Plus what writes check and charge: the owner, the stored size, the version. */
const COLUMNS = new Map([...VIEW_COLUMNS].map(([k, v]) => [k, sql`${v}, owner_id, size_bytes, version`]));
const viewColumns = (s: Pick<Scope, 'hidden'>, asText = false) => (asText ? TEXT_VIEW_COLUMNS : VIEW_COLUMNS).get((s.hidden ?? 'plain') satisfies DataView)!;
const columns = (s: Pick<Scope, 'hidden'>) => COLUMNS.get((s.hidden ?? 'plain') satisfies DataView)!;

/**
 * The project and collection ids are written into the statement as literals (they are
 * validated 24-hex ids from our own tables, never client text). Tenant queries run as cached
 * prepared statements; with the collection id as a parameter a generic plan could not prune
 * the documents table to the collection's partition at planning time and would cover every
 * partition. As literals, each collection's statements are planned on its partition alone.
 * Validated as ObjectIds (hex only), they need no escaping.
 */
function idLiteral(id: string): string {
  if (!isObjectId(id)) throw new Error('scope ids must be ObjectIds');
  return `'${id}'`;
}

/**
 * What reads select from: the collection's own partition, under the same rules as the parent
 * (sql/20_documents_policies.sql: each partition carries its collection's read policies), so
 * PostgreSQL neither prunes partitions nor plans the parent's collections sub-select on every
 * read (a list's planning ~0.2 → ~0.1 ms). Writes go through the parent and its policies.
 */
const readSource = (s: Scope) => sql.raw(partitionName(s.collectionId));
/** What writes go to: the parent and its policies, or for a collection with rules its partition and the rules' policies. */
const writeTarget = (s: Pick<Scope, 'collectionId' | 'viaPartition'>) => (s.viaPartition ? readSource(s as Scope) : sql.raw('documents'));

/** One raw fragment for the fixed part: every statement of a request builds it, and each
 *  interpolated piece is a node Kysely visits on every compile. */
function scopeWhere(s: Scope): RawBuilder<unknown> {
  const fixed = sql.raw(
    `project_id = ${idLiteral(s.projectId)} AND collection_id = ${idLiteral(s.collectionId)}${s.includeDeleted ? '' : ' AND deleted_at IS NULL'}`,
  );
  return s.ownerId ? sql`${fixed} AND owner_id = ${s.ownerId}::text` : fixed;
}

/** Bounds the run time of list/count queries (regexes, deep offsets) in this transaction. */
export async function setStatementTimeout(tx: Tx, ms: number): Promise<void> {
  await sql`SELECT set_config('statement_timeout', ${String(ms)}, true)`.execute(tx);
}

export async function listRows(
  tx: Tx,
  s: Scope,
  where: RawBuilder<unknown>,
  order: RawBuilder<unknown>,
  page: { limit: number; offset: number; sortText?: RawBuilder<unknown>; withTotal?: boolean; asText?: boolean },
): Promise<Array<(DocumentRow | DocumentTextRow) & { sort_value?: string | null; total?: number }>> {
  const sortValue = page.sortText ? sql`, ${page.sortText} AS sort_value` : sql``;
  // The total as a sub-select (planned on its own, run once), not `count(*) OVER ()`: a window
  // over every match would make the page read and sort all of them, while on its own the page
  // can walk an index in the requested order and stop after `limit` rows. Same round trip.
  const matching = sql`FROM ${readSource(s)} WHERE ${scopeWhere(s)} AND ${where}`;
  const total = page.withTotal ? sql`, (SELECT count(*)::int ${matching}) AS total` : sql``;
  const res = await sql<(DocumentRow | DocumentTextRow) & { sort_value?: string | null; total?: number }>`
    SELECT ${viewColumns(s, page.asText)}${sortValue}${total} ${matching}
    ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}`.execute(tx);
  return res.rows;
}

/**
 * Aggregates over the scope's documents. `inputs` are read once per matching document in an
 * inner select (OFFSET 0 keeps the planner from folding them back into every aggregate that
 * reads them); `select` (aliased group keys then aggregates) reads the inputs, grouped by its
 * first `groupCount` columns. Reads `limit + 1` groups so the caller can tell more exist.
 */
export async function aggregateRows(
  tx: Tx,
  s: Scope,
  where: RawBuilder<unknown>,
  q: { inputs: RawBuilder<unknown>[]; select: RawBuilder<unknown>[]; groupCount: number; order: RawBuilder<unknown> | null; limit: number },
): Promise<Array<Record<string, unknown>>> {
  const groupBy = q.groupCount ? sql` GROUP BY ${sql.raw(Array.from({ length: q.groupCount }, (_, i) => i + 1).join(', '))}` : sql``;
  const orderBy = q.order ? sql` ORDER BY ${q.order}` : sql``;
  const res = await sql<Record<string, unknown>>`
    SELECT ${sql.join(q.select)}
    FROM (SELECT ${sql.join([sql`1 AS one`, ...q.inputs])} FROM ${readSource(s)} WHERE ${scopeWhere(s)} AND ${where} OFFSET 0) AS d
    ${groupBy}${orderBy} LIMIT ${q.limit + 1}`.execute(tx);
  return res.rows;
}

export async function countRows(tx: Tx, s: Scope, where: RawBuilder<unknown>): Promise<number> {
  const res = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${readSource(s)} WHERE ${scopeWhere(s)} AND ${where}`.execute(tx);
  return res.rows[0]?.n ?? 0;
}

export async function getRow(tx: Tx, s: Scope, id: string): Promise<StoredRow | undefined> {
  const res = await sql<StoredRow>`SELECT ${columns(s)} FROM ${readSource(s)} WHERE ${scopeWhere(s)} AND id = ${id}`.execute(tx);
  return res.rows[0];
}

/** One document as reads show it: `asText`, its data as JSON text (view.ts, `documentJson`). */
export async function getViewRow(tx: Tx, s: Scope, id: string, asText: boolean): Promise<DocumentRow | DocumentTextRow | undefined> {
  const res = await sql<DocumentRow | DocumentTextRow>`SELECT ${viewColumns(s, asText)} FROM ${readSource(s)} WHERE ${scopeWhere(s)} AND id = ${id}`.execute(tx);
  return res.rows[0];
}

/** The scope's documents with these ids (populate): one partition, like every other read. */
export async function getRowsByIds(tx: Tx, s: Scope, ids: string[]): Promise<DocumentRow[]> {
  const res = await sql<DocumentRow>`SELECT ${viewColumns(s)} FROM ${readSource(s)} WHERE ${scopeWhere(s)} AND id = ANY(${ids}::text[])`.execute(tx);
  return res.rows;
}

export interface NewRow {
  id: string;
  ownerId: string | null;
  data: Record<string, unknown>;
  json: string;
}

/**
 * A document's charged size is measured by PostgreSQL, the same way on every write (the text
 * of the stored jsonb), so the quota counter always equals the sum of `size_bytes`.
 */
/** The bytes a document is charged: its stored jsonb as text (also used by project import). */
export const SIZE = (json: string) => sql`octet_length(${json}::jsonb::text)`;

/**
 * Inserts the rows; returns what only PostgreSQL knows of each, its charged size. The caller
 * has the rest (its own values, `now` as both timestamps), so PostgreSQL does not send the
 * document back and Node does not parse it again.
 */
export async function insertRows(
  tx: Tx, projectId: string, collectionId: string, rows: NewRow[], now: Date, viaPartition = false,
): Promise<Array<{ id: string; size_bytes: number }>> {
  const values = rows.map(
    (r) => sql`(${projectId}, ${collectionId}, ${r.id}, ${r.ownerId}, ${r.json}::jsonb, ${SIZE(r.json)}, ${now}, ${now})`,
  );
  const res = await sql<{ id: string; size_bytes: number }>`
    INSERT INTO ${writeTarget({ collectionId, viaPartition })} (project_id, collection_id, id, owner_id, data, size_bytes, created_at, updated_at)
    VALUES ${sql.join(values)} RETURNING id, size_bytes`.execute(tx);
  return res.rows;
}

/**
 * The `updated_at` of a document's next version: now, or one millisecond after the version it
 * replaces when that is not earlier (two writes within one millisecond, or API processes whose
 * clocks differ). Every version of a document has its own millisecond, which its ETag is made
 * of (etag.ts).
 */
const nextUpdatedAt = (now: Date) => sql`greatest(${now}::timestamptz, updated_at + interval '1 millisecond')`;

/**
 * Writes the new version only if the row is still at `version` (else undefined: retry), and
 * with `ifMatch` only if its `updated_at` is one the precondition names.
 */
export async function updateRow(
  tx: Tx, s: Scope, id: string, version: number, r: Omit<NewRow, 'id' | 'data'>, now: Date, ifMatch?: Precondition | null,
): Promise<StoredRow | undefined> {
  const res = await sql<StoredRow>`
    UPDATE ${writeTarget(s)}
    SET data = ${r.json}::jsonb, owner_id = ${r.ownerId}, size_bytes = ${SIZE(r.json)}, updated_at = ${nextUpdatedAt(now)}, version = version + 1
    WHERE ${scopeWhere(s)} AND id = ${id} AND version = ${version}${ifMatchSql(ifMatch)} RETURNING ${columns(s)}`.execute(tx);
  return res.rows[0];
}

/** What a merge update returns: the caller knows the id, the update time and that it is live. */
export interface PatchedRow {
  data: Record<string, unknown>;
  created_at_ms: number;
  /** Not always the caller's `now` (nextUpdatedAt). */
  updated_at_ms: number;
  /** Stored bytes after minus before: what the quota is charged (or refunded). */
  growth: number;
}

/**
 * Merges top-level keys into a document in one statement (`data || patch`), the owner column
 * following the owner field when the patch sets it; with `ifMatch`, only into the version(s) it names.
 */
export async function patchRow(
  tx: Tx, s: Scope, id: string, patch: { json: string; ownerId?: string | null }, now: Date, ifMatch?: Precondition | null,
): Promise<PatchedRow | undefined> {
  const owner = patch.ownerId === undefined ? sql`owner_id` : sql`${patch.ownerId}::text`;
  // SET reads the row version it replaces (after waiting for a concurrent update, the one that
  // committed), so `size_before` is exact without locking the row first (migrations/023).
  // RETURNING only what the caller cannot know: each column costs a field description and a
  // parser per execution in node-postgres (~1.5 µs), on every update.
  const res = await sql<PatchedRow>`
    UPDATE ${writeTarget(s)}
    SET data = data || ${patch.json}::jsonb, size_before = size_bytes, size_bytes = octet_length((data || ${patch.json}::jsonb)::text),
        owner_id = ${owner}, updated_at = ${nextUpdatedAt(now)}, version = version + 1
    WHERE ${scopeWhere(s)} AND id = ${id}${ifMatchSql(ifMatch)}
    RETURNING ${dataOf(s)}, ${ms('created_at')}, ${ms('updated_at')}, size_bytes - size_before AS growth`.execute(tx);
  return res.rows[0];
}

/** Soft delete (deletedAt set) or restore (cleared); with `ifMatch`, only of the version(s) it names. */
export async function setDeleted(tx: Tx, s: Scope, id: string, at: Date | null, now: Date, ifMatch?: Precondition | null): Promise<StoredRow | undefined> {
  const res = await sql<StoredRow>`
    UPDATE ${writeTarget(s)} SET deleted_at = ${at}, updated_at = ${nextUpdatedAt(now)}
    WHERE ${scopeWhere(s)} AND id = ${id}${ifMatchSql(ifMatch)} RETURNING ${columns(s)}`.execute(tx);
  return res.rows[0];
}

export async function hardDelete(tx: Tx, s: Scope, id: string, ifMatch?: Precondition | null): Promise<StoredRow | undefined> {
  const res = await sql<StoredRow>`DELETE FROM ${writeTarget(s)} WHERE ${scopeWhere(s)} AND id = ${id}${ifMatchSql(ifMatch)} RETURNING ${columns(s)}`.execute(tx);
  return res.rows[0];
}

/**
 * Users of the project by id, for populating `Ref` fields that point at `users`. `hidden`: with
 * their hidden profile fields (`private`, `secret`: the secret key's role only; the publishable
 * role has no privilege on them, sql/40_auth_policies.sql).
 */
export function usersByIds(tx: Tx, projectId: string, ids: string[], hidden = false) {
  const data = sql.raw(hidden ? WHOLE_DATA_SQL : 'data');
  return sql<{ id: string; email: string; data: Record<string, unknown>; created_at: Date; updated_at: Date }>`
    SELECT id, email, ${data} AS data, created_at, updated_at FROM app_users
    WHERE project_id = ${projectId} AND id = ANY(${ids}::text[])`.execute(tx);
}
