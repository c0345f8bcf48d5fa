/** Stored rows → wire documents: `_id` first, the data, then the system timestamps and flags. */
/** Timestamps as epoch milliseconds (data/queries.ts). */
export interface DocumentRow {
  id: string;
  data: Record<string, unknown>;
  created_at_ms: number;
  updated_at_ms: number;
  deleted_at_ms: number | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

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
