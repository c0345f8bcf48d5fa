/**
 * The data API (docs/data.md): CRUD, the list grammar (filters, sort, offset and cursor pages,
 * totals, count, populate, projection, search), aggregation, atomic batches, soft delete and
 * restore. Every write carries an Idempotency-Key (unless retries are off), so a retried write
 * is answered with the first answer and never applied twice.
 *
 * Types: a schema map from `plinth types` (`createClient<Schema>()`) types each collection's
 * documents, fields, sort keys and filters; a wrong field name is a compile error.
 */
import { readBody, unwrap, type QueryValue, type Transport } from './core.js';
import { errorOf } from './errors.js';

export type Doc = Record<string, unknown>;
/** Collection name → document fields, as `plinth types` writes it. */
export type SchemaMap = Record<string, Doc>;
/** A reference to a document of collection `C` (its id). */
export type Ref<C extends string = string> = string & { readonly __ref?: C };

export interface SystemFields {
  _id: string;
  createdAt: string;
  updatedAt: string;
  isDeleted?: boolean;
  deletedAt?: string | null;
}
/** A document as the server answers it. */
export type Stored<T> = T & SystemFields;

type Key<T> = Extract<keyof T, string>;
/** A field of `T` (or a dotted path below one), or a system field. */
export type FieldName<T> = Key<T> | Key<SystemFields> | `${Key<T>}.${string}`;
export type SortKey<T> = FieldName<T> | `-${FieldName<T>}` | `${FieldName<T>}:${'asc' | 'desc' | '1' | '-1'}`;
export type Operator = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'exists' | 'regex';
type Suffix = Exclude<Operator, 'eq'>;
/** The list API's filter object: `{status: 'open', views_gte: 10, tags_in: ['a', 'b']}`. */
export type Filter<T> = { [K in FieldName<T> as K | `${K}_${Suffix}`]?: QueryValue };
/** What an update sends: some fields, or dotted paths that set inner keys. */
export type Patch<T> = Partial<T> & { [path: `${string}.${string}`]: unknown };

export interface Page<T> {
  items: Stored<T>[];
  limit: number;
  /** Offset pages. */
  page?: number;
  /** Exact when the page shows it or `withTotal()` asked for it, else null (docs/data.md "Totals"). */
  total: number | null;
  /** Cursor pages: pass to `after()` for the next page; null at the end. */
  nextCursor?: string | null;
}

export interface AggregateSpec<T> {
  groupBy?: Array<FieldName<T> | `${FieldName<T>}:${'hour' | 'day' | 'week' | 'month' | 'year'}`>;
  count?: boolean;
  countDistinct?: FieldName<T>[];
  sum?: FieldName<T>[];
  avg?: FieldName<T>[];
  min?: FieldName<T>[];
  max?: FieldName<T>[];
  sort?: string;
  limit?: number;
}
export interface AggregateGroup {
  key: Record<string, unknown>;
  count?: number;
  countDistinct?: Record<string, number>;
  sum?: Record<string, number | null>;
  avg?: Record<string, number | null>;
  min?: Record<string, unknown>;
  max?: Record<string, unknown>;
}

export interface WriteOptions {
  /** Your own Idempotency-Key (default: a fresh UUID per call, reused by its retries). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/**
 * A document's ETag (docs/data.md "Conditional writes"), derived from its `_id` and `updatedAt`
 * as the server derives it: works for list items, realtime documents and write answers alike.
 * Undefined when the document lacks either (e.g. read with `meta=false`).
 */
export function etagOf(doc: Partial<SystemFields>): string | undefined {
  const ms = doc.updatedAt ? Date.parse(doc.updatedAt) : NaN;
  return doc._id && Number.isFinite(ms) ? `"${doc._id}-${ms}"` : undefined;
}

export interface ConditionalOptions extends WriteOptions {
  /**
   * Write only over this version: an ETag (`getWithEtag`, `etagOf`), or the document as you read
   * it (its tag is derived), or `*`. When it changed since, the write fails with
   * `PreconditionFailedError` (412 `precondition_failed`) and nothing is written.
   */
  ifMatch?: string | Partial<SystemFields>;
}

function conditional(opts: ConditionalOptions) {
  const { ifMatch, ...rest } = opts;
  if (ifMatch === undefined) return rest;
  const tag = typeof ifMatch === 'string' ? ifMatch : etagOf(ifMatch);
  if (!tag) throw new TypeError('ifMatch: the document has no _id and updatedAt to derive its ETag from');
  return { ...rest, headers: { 'if-match': tag } };
}

type Param = readonly [string, string];
const str = (v: QueryValue): string =>
  Array.isArray(v) ? v.map((x) => (x instanceof Date ? x.toISOString() : String(x))).join(',') : v instanceof Date ? v.toISOString() : String(v);

/** An immutable list query: each method returns a new query. */
export class Query<T extends Doc = Doc> {
  constructor(
    protected readonly t: Transport,
    readonly name: string,
    protected readonly params: readonly Param[] = [],
  ) {}

  protected with(...p: Param[]): this {
    const Ctor = this.constructor as new (t: Transport, name: string, params: readonly Param[]) => this;
    return new Ctor(this.t, this.name, [...this.params, ...p]);
  }

  protected set(key: string, value: string): this {
    const Ctor = this.constructor as new (t: Transport, name: string, params: readonly Param[]) => this;
    return new Ctor(this.t, this.name, [...this.params.filter(([k]) => k !== key), [key, value]]);
  }

  protected get path(): string {
    return `/api/data/${encodeURIComponent(this.name)}`;
  }

  /** A filter: `where('views', 'gte', 10)`, or the filter object `where({status: 'open', views_gte: 10})`. */
  where(filter: Filter<T>): this;
  where(field: FieldName<T>, op: Operator, value: QueryValue): this;
  where(field: FieldName<T> | Filter<T>, op?: Operator, value?: QueryValue): this {
    if (typeof field === 'object') {
      const f = field as Record<string, QueryValue>;
      return this.with(...Object.keys(f).filter((k) => f[k] !== undefined).map((k) => [k, str(f[k])] as Param));
    }
    return this.with([op === 'eq' || !op ? field : `${field}_${op}`, str(value)]);
  }

  /** Equality: `eq('status', 'open')` (on an array field: holds the value). */
  eq<F extends FieldName<T>>(field: F, value: F extends keyof T ? T[F] & QueryValue : QueryValue): this {
    return this.where(field, 'eq', value);
  }

  /** `sort('-createdAt', 'title')` (up to 5 keys; default newest first). */
  sort(...keys: SortKey<T>[]): this {
    return this.set('sort', keys.join(','));
  }

  limit(n: number): this {
    return this.set('limit', String(n));
  }

  /** An offset page (1-based). */
  page(n: number): this {
    return this.set('page', String(n));
  }

  skip(n: number): this {
    return this.set('skip', String(n));
  }

  /** Keyset pages: the `nextCursor` of the previous page (or '' for the first cursor page). */
  after(cursor: string): this {
    return this.set('cursor', cursor);
  }

  /** Only these fields (and `_id`). */
  select(...fields: FieldName<T>[]): this {
    return this.set('fields', fields.join(','));
  }

  /** Resolve these `Ref` fields to their documents. */
  populate(...fields: Key<T>[]): this {
    return this.set('populate', fields.join(','));
  }

  /** Full-text search over the collection's searchable fields (web-search syntax). */
  search(text: string): this {
    return this.set('search', text);
  }

  /** Include soft-deleted documents. */
  withDeleted(): this {
    return this.set('include_deleted', 'true');
  }

  /** Ask for an exact `total` (costs a count of every match). */
  withTotal(): this {
    return this.set('include_total', 'true');
  }

  /** The query's parameters, as the server reads them. */
  toParams(): Array<[string, string]> {
    return this.params.map(([k, v]) => [k, v]);
  }

  /** One page of documents. */
  list(opts: { signal?: AbortSignal } = {}): Promise<Page<T>> {
    return this.t.request<Page<T>>({ path: this.path, query: this.params, signal: opts.signal });
  }

  /** How many documents match (filters and search apply; paging does not). */
  async count(opts: { signal?: AbortSignal } = {}): Promise<number> {
    const q = this.params.filter(([k]) => !['page', 'limit', 'skip', 'cursor', 'sort', 'fields', 'populate'].includes(k));
    return (await this.t.request<{ count: number }>({ path: this.path, query: [...q, ['count', 'true']], signal: opts.signal })).count;
  }

  /** Every matching document, page after page by cursor (`limit` documents per request). */
  async *pages(): AsyncGenerator<Stored<T>[], void, unknown> {
    let cursor = '';
    for (;;) {
      const p = await this.after(cursor).list();
      if (p.items.length) yield p.items;
      if (!p.nextCursor || !p.items.length) return;
      cursor = p.nextCursor;
    }
  }

  /** Counts, sums, averages and extremes, grouped (docs/data.md "Aggregation"); filters of this query apply. */
  async aggregate(spec: AggregateSpec<T>): Promise<{ groups: AggregateGroup[]; truncated: boolean }> {
    const q: Param[] = this.params.filter(([k]) => !['page', 'limit', 'skip', 'cursor', 'sort', 'fields', 'populate'].includes(k));
    for (const k of ['groupBy', 'countDistinct', 'sum', 'avg', 'min', 'max'] as const) {
      const v = spec[k];
      if (v?.length) q.push([k, v.join(',')]);
    }
    if (spec.count) q.push(['count', 'true']);
    if (spec.sort) q.push(['sort', spec.sort]);
    if (spec.limit !== undefined) q.push(['limit', String(spec.limit)]);
    return this.t.request({ path: `${this.path}/aggregate`, query: q });
  }
}

/** A collection: its queries, and the writes on its documents. */
export class Collection<T extends Doc = Doc> extends Query<T> {
  /** One document by id (404 `document_not_found` when missing or soft-deleted). */
  get(id: string, opts: { populate?: Key<T>[]; select?: FieldName<T>[]; signal?: AbortSignal } = {}): Promise<Stored<T>> {
    const query: Param[] = [];
    if (opts.populate?.length) query.push(['populate', opts.populate.join(',')]);
    if (opts.select?.length) query.push(['fields', opts.select.join(',')]);
    return this.t.request({ path: `${this.path}/${encodeURIComponent(id)}`, query, signal: opts.signal });
  }

  /** One document and its ETag, for a later `update(id, patch, { ifMatch: etag })`. */
  async getWithEtag(id: string, opts: { populate?: Key<T>[]; select?: FieldName<T>[]; signal?: AbortSignal } = {}): Promise<{ doc: Stored<T>; etag: string }> {
    const query: Param[] = [];
    if (opts.populate?.length) query.push(['populate', opts.populate.join(',')]);
    if (opts.select?.length) query.push(['fields', opts.select.join(',')]);
    const res = await this.t.send({ path: `${this.path}/${encodeURIComponent(id)}`, query, signal: opts.signal });
    const body = await readBody(res);
    if (!res.ok) throw errorOf(res, body);
    const doc = unwrap<Stored<T>>(body);
    return { doc, etag: res.headers.get('etag') ?? etagOf(doc)! };
  }

  /** Creates a document; answers it as stored (with `_id` and the timestamps). */
  insert(doc: T, opts: WriteOptions = {}): Promise<Stored<T>> {
    return this.t.request({ method: 'POST', path: this.path, body: doc, idempotent: true, ...opts });
  }

  /** 1–100 documents in one all-or-nothing insert. */
  insertMany(docs: T[], opts: WriteOptions = {}): Promise<{ insertedCount: number; insertedIds: string[] }> {
    return this.t.request({ method: 'POST', path: `${this.path}/bulk`, body: docs, idempotent: true, ...opts });
  }

  /**
   * Merges `patch` into the document (dotted keys set inner keys); answers the document after it.
   * `ifMatch`: only over that version (else `PreconditionFailedError`).
   */
  update(id: string, patch: Patch<T>, opts: ConditionalOptions = {}): Promise<Stored<T>> {
    return this.t.request({ method: 'PATCH', path: `${this.path}/${encodeURIComponent(id)}`, body: patch, idempotent: true, ...conditional(opts) });
  }

  /** Soft delete (restorable); `hard: true` purges it (secret key only); `ifMatch` as for `update`. */
  async delete(id: string, opts: ConditionalOptions & { hard?: boolean } = {}): Promise<void> {
    const { hard, ...rest } = opts;
    await this.t.request({ method: 'DELETE', path: `${this.path}/${encodeURIComponent(id)}`, query: hard ? { hard: 'true' } : undefined, idempotent: true, ...conditional(rest) });
  }

  /** Un-deletes a soft-deleted document; `ifMatch` as for `update`. */
  restore(id: string, opts: ConditionalOptions = {}): Promise<Stored<T>> {
    return this.t.request({ method: 'POST', path: `${this.path}/${encodeURIComponent(id)}/restore`, idempotent: true, ...conditional(opts) });
  }
}

export type BatchOperation<S extends SchemaMap = SchemaMap> = {
  [C in Extract<keyof S, string>]:
    | { op: 'create'; collection: C; data: S[C] }
    | { op: 'update'; collection: C; id: string; data: Patch<S[C]>; ifMatch?: string }
    | { op: 'delete'; collection: C; id: string; hard?: boolean; ifMatch?: string }
    | { op: 'restore'; collection: C; id: string; ifMatch?: string };
}[Extract<keyof S, string>];

export interface BatchResult {
  op: 'create' | 'update' | 'delete' | 'restore';
  collection: string;
  id: string;
  data?: Doc & SystemFields;
}

/** 1–100 operations across collections in one transaction: all are written, or none (the error names the failing one in `details.operation`). */
export async function batch<S extends SchemaMap>(t: Transport, operations: BatchOperation<S>[], opts: WriteOptions = {}): Promise<BatchResult[]> {
  return (await t.request<{ results: BatchResult[] }>({ method: 'POST', path: '/api/data/batch', body: { operations }, idempotent: true, ...opts })).results;
}
