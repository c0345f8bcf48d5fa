/**
 * New ids for a copy (`?newIds=true`): every document and end user of the archive gets a new
 * id, and every place that held an old one (documents' owner ids, owner fields, `Ref` fields and
 * any other string equal to an archived id, in documents and in users' profile data, files'
 * owners) gets the new one.
 *
 * The new id is a keyed hash of the old (a fresh key per import): the same old id gives the
 * same new id wherever and whenever it is met, so the archive is still read once, in one pass,
 * without a table of pairs in memory; only which ids the archive holds is remembered (in a
 * temporary table, queries.ts), because a document may name a user or a document that comes
 * later in the archive. The first 4 bytes (the creation time of an ObjectId) are kept, so ids
 * sort as they did, to the second.
 */
import { createHmac, randomBytes } from 'node:crypto';

const CANDIDATE = /^[0-9a-f]{24}$/;

export class NewIds {
  private readonly key = randomBytes(32);

  of(old: string): string {
    return old.slice(0, 8) + createHmac('sha256', this.key).update(old).digest('hex').slice(0, 16);
  }

  /** Strings of a value that may be archived ids (ObjectId-shaped), to look up in one query. */
  static candidates(value: unknown, out: Set<string> = new Set()): Set<string> {
    if (typeof value === 'string') {
      if (CANDIDATE.test(value)) out.add(value);
    } else if (Array.isArray(value)) {
      for (const v of value) NewIds.candidates(v, out);
    } else if (value !== null && typeof value === 'object') {
      for (const v of Object.values(value)) NewIds.candidates(v, out);
    }
    return out;
  }

  /** The value with every string that is an archived id (in `archived`) replaced by its new id. */
  rewrite(value: unknown, archived: ReadonlySet<string>): unknown {
    if (typeof value === 'string') return archived.has(value) ? this.of(value) : value;
    if (Array.isArray(value)) return value.map((v) => this.rewrite(v, archived));
    // fromEntries defines own members: a `__proto__` key in client data stays a plain key.
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.rewrite(v, archived)]));
    return value;
  }
}
