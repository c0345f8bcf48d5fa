/**
 * Conditional requests on one document (docs/data.md "Conditional writes: ETag and If-Match"),
 * RFC 9110 §8.8.3 and §13.1.
 *
 * A document's entity tag is strong and made of what every read of it already returns: its id
 * and its `updatedAt` in epoch milliseconds, `"<id>-<ms>"` (no extra column, no extra query).
 * It is strong because every write of a document moves `updated_at` forward by at least one
 * millisecond (queries.ts, `NEXT_UPDATED_AT`): two versions of one document never share a
 * millisecond, whatever the clocks of the API processes say.
 *
 * `If-Match` is checked in the write's own statement (queries.ts, `ifMatchSql`), so there is no
 * window between the check and the write: of two writers holding the same tag one wins, the
 * other gets 412 `precondition_failed`.
 */
import { Type } from '@sinclair/typebox';
import { sql, type RawBuilder } from 'kysely';
import { DataErrors } from './errors.js';

/** The entity tag of a document at one version. */
export function etagOf(id: string, updatedMs: number): string {
  return `"${id}-${updatedMs}"`;
}

/** The entity tag of a document as the API shows it (`_id`, `updatedAt`), or null without them. */
export function etagOfDocument(doc: unknown): string | null {
  if (typeof doc !== 'object' || doc === null) return null;
  const { _id: id, updatedAt } = doc as Record<string, unknown>;
  if (typeof id !== 'string' || typeof updatedAt !== 'string') return null;
  const ms = Date.parse(updatedAt);
  return Number.isFinite(ms) ? etagOf(id, ms) : null;
}

/**
 * A parsed `If-Match` for one document: the `updated_at` milliseconds it accepts (those of its
 * tags that name this document; an empty list accepts no version). `*` is no condition at all:
 * it asks only that the document exists, which every write asks anyway (404 otherwise).
 */
export interface Precondition {
  ms: number[];
}

/** One element of an entity-tag list: optional `W/`, then a quoted tag (RFC 9110 §8.8.3). */
const ELEMENT = /[ \t]*(?:(W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(?:,|$)/y;

/** The tags of an `If-Match`/`If-None-Match` value, or null when it is not a list of entity tags. */
function parseTags(value: string): Array<{ weak: boolean; tag: string }> | null {
  const tags: Array<{ weak: boolean; tag: string }> = [];
  ELEMENT.lastIndex = 0;
  while (ELEMENT.lastIndex < value.length) {
    const start = ELEMENT.lastIndex;
    const m = ELEMENT.exec(value);
    if (!m || ELEMENT.lastIndex === start) return null;
    if (m[2] !== undefined) tags.push({ weak: m[1] !== undefined, tag: m[2] });
    else if (m[1] !== undefined) return null;
  }
  return tags;
}

const headerText = (h: string | string[] | undefined) => (Array.isArray(h) ? h.join(', ') : h);

/**
 * The `If-Match` header of a write of document `id`: null without it (or with `*`), else the
 * versions it accepts. Strong comparison: a weak tag never matches. 400 `if_match_invalid`
 * when the value is not `*` or a list of quoted entity tags.
 */
export function parseIfMatch(header: string | string[] | undefined, id: string): Precondition | null {
  const value = headerText(header)?.trim();
  if (value === undefined || value === '*') return null;
  const tags = value === '' ? null : parseTags(value);
  if (!tags || tags.length === 0) throw DataErrors.if_match_invalid();
  const ms: number[] = [];
  for (const t of tags) {
    const at = versionOf(t.tag, id);
    if (!t.weak && at !== null) ms.push(at);
  }
  return { ms };
}

/** The version (`updated_at` ms) a tag names for document `id`, or null when it names another. */
function versionOf(tag: string, id: string): number | null {
  if (tag.length < id.length + 2 || !tag.startsWith(id) || tag[id.length] !== '-') return null;
  const rest = tag.slice(id.length + 1);
  if (!/^-?\d{1,16}$/.test(rest)) return null;
  return Number(rest);
}

/** Whether a version of document `id` satisfies the precondition. */
export function satisfies(p: Precondition | null | undefined, updatedMs: number): boolean {
  return !p || p.ms.includes(updatedMs);
}

/**
 * Whether `If-None-Match` names the document's current tag (weak comparison, RFC 9110 §13.1.2):
 * a GET then answers 304. A malformed value matches nothing.
 */
export function noneMatchHit(header: string | string[] | undefined, etag: string): boolean {
  const value = headerText(header)?.trim();
  if (!value) return false;
  if (value === '*') return true;
  const tags = parseTags(value);
  if (!tags) return false;
  const opaque = etag.slice(1, -1);
  return tags.some((t) => t.tag === opaque);
}

/** The statement's extra condition for a precondition (none without one). */
export function ifMatchSql(p: Precondition | null | undefined): RawBuilder<unknown> {
  if (!p) return sql``;
  return sql` AND floor(extract(epoch FROM updated_at) * 1000)::int8 = ANY(${p.ms}::int8[])`;
}

/** 412 with the document's current tag, so the client can read it again or show the difference. */
export function preconditionFailed(id: string, updatedMs: number) {
  return DataErrors.precondition_failed(undefined, undefined, { headers: { etag: etagOf(id, updatedMs) } });
}

const TAG_FORMAT = 'Entity tags are quoted and opaque: use the `ETag` a read or a write of the document answered.';

/** `If-Match` on the writes of one document (PUT, PATCH, DELETE, restore). */
export const IfMatchHeader = {
  'if-match': Type.Optional(
    Type.String({
      maxLength: 4096,
      description:
        'Optional: write only if the document is still at this version. One or more `ETag`s of the document (comma-separated), ' +
        'or `*`. When the document has changed since: 412 `precondition_failed` (its current tag in `ETag`) and nothing is written; ' +
        `checked in the write's own statement. A value that is not a list of entity tags: 400 \`if_match_invalid\`. ${TAG_FORMAT}`,
    }),
  ),
};

/** `If-None-Match` on the read of one document. */
export const IfNoneMatchHeaders = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      maxLength: 4096,
      description:
        'Optional: one or more `ETag`s of the document, or `*`. When one is the current tag, 304 Not Modified without a body ' +
        `(not with \`populate\`, whose referenced documents have their own versions). ${TAG_FORMAT}`,
    }),
  ),
});
