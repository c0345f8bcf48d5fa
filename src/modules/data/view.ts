/** Stored rows → wire documents: `_id` first, the data, then the system timestamps and flags. */
import { isoFromMs as iso } from '../../lib/iso-time.js';

/** Timestamps as epoch milliseconds (data/queries.ts). */
export interface DocumentRow {
  id: string;
  data: Record<string, unknown>;
  created_at_ms: number;
  updated_at_ms: number;
  deleted_at_ms: number | null;
}

/** A row whose `data` is PostgreSQL's JSON text of it, not parsed (queries.ts, `asText`). */
export interface DocumentTextRow extends Omit<DocumentRow, 'data'> {
  data: string;
}

export function documentView(row: DocumentRow): Record<string, unknown> {
  return {
    _id: row.id,
    ...row.data,
    createdAt: iso(row.created_at_ms),
    updatedAt: iso(row.updated_at_ms),
    isDeleted: row.deleted_at_ms !== null,
    deletedAt: row.deleted_at_ms === null ? null : iso(row.deleted_at_ms),
  };
}

/**
 * The wire form of `documentView` (then `shape` without `fields`) as JSON text, with the
 * document's fields spliced in as PostgreSQL wrote them: a page goes out without parsing each
 * document into objects and serializing it back (about 1 µs per document, and the garbage).
 * The JSON value is the same; the text differs only in jsonb's spacing, in numbers written as
 * stored (`1.50`, integers past 2^53 exact), and, for a stored key that is also a system field,
 * in a repeated key whose last value is the one `documentView` gives.
 */
export function documentJson(row: DocumentTextRow, meta: boolean): string {
  const fields = row.data.length > 2 ? `${row.data.slice(1, -1)},` : '';
  const times = meta ? `"createdAt":"${iso(row.created_at_ms)}","updatedAt":"${iso(row.updated_at_ms)}",` : '';
  const deleted = row.deleted_at_ms === null ? '"isDeleted":false,"deletedAt":null' : `"isDeleted":true,"deletedAt":"${iso(row.deleted_at_ms)}"`;
  return `{"_id":${JSON.stringify(row.id)},${fields}${times}${deleted}}`;
}

function pick(doc: Record<string, unknown>, path: string[]): unknown {
  let node: unknown = doc;
  for (const p of path) {
    if (typeof node !== 'object' || node === null || !Object.prototype.hasOwnProperty.call(node, p)) return undefined;
    node = (node as Record<string, unknown>)[p];
  }
  return node;
}

function put(out: Record<string, unknown>, path: string[], value: unknown): void {
  let node = out;
  for (const p of path.slice(0, -1)) {
    if (typeof node[p] !== 'object' || node[p] === null) node[p] = {};
    node = node[p] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

/** `fields=a,b.c` projection (always keeps `_id`); `meta=false` drops the timestamps. */
export function shape(doc: Record<string, unknown>, fields: string[][] | null, meta: boolean): Record<string, unknown> {
  let out = doc;
  if (fields) {
    out = { _id: doc._id };
    for (const path of fields) {
      const v = pick(doc, path);
      if (v !== undefined) put(out, path, v);
    }
  }
  if (!meta) {
    out = { ...out };
    delete out.createdAt;
    delete out.updatedAt;
  }
  return out;
}
