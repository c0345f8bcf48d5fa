/**
 * A change as realtime subscribers see it, and who may see it: the same rule as a list call
 * at that moment (src/modules/data/access.ts and the documents policies in sql/20): the secret
 * key sees every document; a publishable key sees every document of a collection that is not
 * private, and of a private one only those its end user owns; of a collection with a read rule,
 * those the rule admits (docs/rules.md): in memory, or in the database for a rule with a lookup.
 */
import type { CollectionDef } from '../collections/cache.js';
import { readRules } from '../rules/has-rules.js';
import { readRuleTest } from '../rules/evaluate.js';
import { documentView } from '../data/view.js';
import type { Candidate } from './match.js';
import type { Position } from './position.js';
import type { ChangeRow } from './queries.js';
import type { TicketClaims } from './ticket.js';

export const positionOf = (row: ChangeRow): Position => ({ xid: BigInt(row.xid), id: BigInt(row.id) });

/**
 * Whether the read rule admitted the version before an update: the caller could see it then.
 * Unknown (no previous version recorded, or no read rule) is no: a `leave` never names a
 * document the caller may never have been able to read.
 */
export function mayReadBefore(scope: TicketClaims, col: CollectionDef, before: Candidate): boolean {
  if (scope.projectId !== col.project_id || scope.keyKind === 'secret' || !readRules(col)) return false;
  const test = readRuleTest(col);
  return !!test && test(before, { userId: scope.userId, keyKind: scope.keyKind });
}

/** Whether a collection's read rule needs the database to judge an event (a lookup, `@auth.<field>`). */
export function readRuleNeedsDatabase(col: CollectionDef): boolean {
  return readRules(col) && !readRuleTest(col);
}

/**
 * `verdict`: for a read rule that needs the database, what the feed found when it judged the
 * change in the subscriber's scope (feed.ts, `readableChanges`); without one the answer is no.
 */
export function mayRead(scope: TicketClaims, col: CollectionDef, row: ChangeRow, verdict?: boolean): boolean {
  if (scope.projectId !== row.project_id) return false;
  if (scope.keyKind === 'secret') return true;
  if (readRules(col)) {
    // The read rule in memory (docs/rules.md), or, for one that needs the database, the
    // feed's verdict (fail closed: none is no).
    const test = readRuleTest(col);
    if (!test) return verdict === true;
    return test({ id: row.doc_id, data: row.data ?? {}, createdMs: row.created_ms, updatedMs: row.updated_ms }, { userId: scope.userId, keyKind: scope.keyKind });
  }
  const isPrivate = col.rls.enabled && col.rls.mode === 'private';
  return !isPrivate || (scope.userId !== null && row.owner_id === scope.userId);
}

export function candidateOf(row: ChangeRow): Candidate {
  return { id: row.doc_id, data: row.data ?? {}, createdMs: row.created_ms, updatedMs: row.updated_ms };
}

/**
 * Previous versions already rebuilt, by change row: the feed hands the same row objects to
 * every subscriber of a project, so a change's previous version is rebuilt once, not once per
 * subscriber (a copy of the whole document each time). Weak: gone with the rows.
 */
const previousVersions = new WeakMap<ChangeRow, Candidate | null>();

/**
 * What an update's document was before it, rebuilt from the new one and the difference the
 * change row carries (migrations/028); null when it is not an update or the difference was not
 * recorded (a document over the cap, or a change written before 028). Rebuilt once per row;
 * callers only read it.
 */
export function previousCandidateOf(row: ChangeRow): Candidate | null {
  let previous = previousVersions.get(row);
  if (previous === undefined) previousVersions.set(row, (previous = rebuildPrevious(row)));
  return previous;
}

function rebuildPrevious(row: ChangeRow): Candidate | null {
  if (row.action !== 'update' || row.data === null || row.prev_fields === null || row.prev_updated_ms === null) return null;
  const data: Record<string, unknown> = { ...row.data };
  for (const key of row.prev_absent ?? []) delete data[key];
  // defineProperty, not assignment: a field named __proto__ stays a field
  for (const [key, value] of Object.entries(row.prev_fields)) {
    Object.defineProperty(data, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return { id: row.doc_id, data, createdMs: row.created_ms, updatedMs: row.prev_updated_ms };
}

/**
 * What a change says, to realtime subscribers and in webhook payloads alike: the collection,
 * the action, the id, the version and the document as the data API shows it (or `truncated`).
 */
export function changeData(row: ChangeRow, collectionName = row.collection): Record<string, unknown> {
  const data: Record<string, unknown> = { collection: collectionName, action: row.action, id: row.doc_id, version: row.version };
  if (row.truncated) data.truncated = true;
  else data.document = documentView({ id: row.doc_id, data: row.data ?? {}, created_at_ms: row.created_ms, updated_at_ms: row.updated_ms, deleted_at_ms: row.deleted_ms });
  return data;
}

/**
 * The SSE `data:` of a change and of its `leave`, serialized once per row and collection name:
 * the feed hands the same row objects to every subscriber of a project, and a document's JSON
 * is the larger part of the work of sending it (weak, like previousVersions).
 */
const serialized = new WeakMap<ChangeRow, { name: string; change?: string; leave?: string }>();

function serializedOf(row: ChangeRow, name: string) {
  let entry = serialized.get(row);
  if (entry === undefined || entry.name !== name) serialized.set(row, (entry = { name }));
  return entry;
}

export function changeJson(row: ChangeRow, name: string): string {
  const entry = serializedOf(row, name);
  return (entry.change ??= JSON.stringify(changeData(row, name)));
}

export function leaveJson(row: ChangeRow, name: string): string {
  const entry = serializedOf(row, name);
  return (entry.leave ??= JSON.stringify({ collection: name, id: row.doc_id, version: row.version }));
}
