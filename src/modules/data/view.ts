/** Stored rows → wire documents: `_id` first, the data, then the system timestamps and flags. */
export interface DocumentRow {
  id: string;
  data: Record<string, unknown>;
  created_at: Date | string;
  updated_at: Date | string;
  deleted_at: Date | string | null;
}

const iso = (d: Date | string) => (d instanceof Date ? d.toISOString() : new Date(d).toISOString());

export function documentView(row: DocumentRow): Record<string, unknown> {
  return {
    _id: row.id,
    ...row.data,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    isDeleted: row.deleted_at !== null,
    deletedAt: row.deleted_at === null ? null : iso(row.deleted_at),
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
