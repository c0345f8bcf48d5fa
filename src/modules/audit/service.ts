/**
 * The audit log, knowing no HTTP (docs/audit.md): appending an entry to a project's hash
 * chain, listing and exporting a project's entries, verifying its chain, and the retention
 * trim. Entries are written by the owner connection in a transaction of their own that holds
 * the project's head row lock (one writer per project at a time: the chain never forks); reads
 * run in the project's tenant scope, after the operator's ownership of it is checked (404
 * otherwise).
 */
import { Readable } from 'node:stream';
import type { AppContext } from '../../context.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { loadMemberProject } from '../projects/access.js';
import { entryHash, type ChainedContent } from './chain.js';
import { AuditErrors } from './errors.js';
import { maskSecrets } from './mask.js';
import { chainPage, insertEntry, listEntries, lockHead, readHead, trimBefore, type EntryFilter, type EntryRow } from './queries.js';
import { entryView } from './view.js';

export interface AuditEvent {
  projectId: string;
  operator: { id: string; email: string } | null;
  ip: string | null;
  /** A stable name: `<area>.<verb>` (`keys.rotate`, `schema.update`). */
  action: string;
  target?: string | null;
  before?: unknown;
  after?: unknown;
}

/** JSON as jsonb gives it back (no undefined members, numbers as JSON has them). */
const asStored = (v: unknown) => (v === null || v === undefined ? null : (JSON.parse(JSON.stringify(v)) as unknown));

/**
 * Appends one entry (before/after masked here, whatever the caller passed) to the project's
 * chain. Returns its id and seq.
 */
export async function recordAudit(ctx: AppContext, e: AuditEvent): Promise<{ id: string; seq: number; hash: string }> {
  const before = asStored(maskSecrets(e.before));
  const after = asStored(maskSecrets(e.after));
  return ctx.db.admin.transaction().execute(async (tx) => {
    const head = await lockHead(tx, e.projectId);
    const content: ChainedContent = {
      projectId: e.projectId,
      seq: Number(head.seq) + 1,
      // After the lock: entries of a project are in time order as in seq order (one clock).
      at: ctx.clock.now(),
      operatorId: e.operator?.id ?? null,
      operatorEmail: e.operator?.email ?? null,
      ip: e.ip,
      action: e.action,
      target: e.target ?? null,
      before,
      after,
      prevHash: head.hash,
    };
    const hash = entryHash(content);
    const id = await insertEntry(tx, { ...content, hash });
    return { id: String(id), seq: content.seq, hash };
  });
}

export interface AuditQuery {
  action?: string;
  operator?: string;
  target?: string;
  from?: string;
  to?: string;
  cursor?: string;
  limit: number;
}

function filterOf(q: Omit<AuditQuery, 'limit'>, limit: number): EntryFilter {
  const from = q.from !== undefined ? new Date(q.from) : undefined;
  const to = q.to !== undefined ? new Date(q.to) : undefined;
  if (from && to && from > to) throw AuditErrors.audit_time_range_invalid();
  let beforeSeq: number | undefined;
  if (q.cursor !== undefined) {
    beforeSeq = Number(q.cursor);
    if (!Number.isSafeInteger(beforeSeq) || beforeSeq < 1) throw AuditErrors.audit_cursor_invalid();
  }
  const prefix = q.action?.endsWith('.*') ? q.action.slice(0, -1) : undefined;
  return { action: prefix ? undefined : q.action, actionPrefix: prefix, operator: q.operator, target: q.target, from, to, beforeSeq, limit };
}

/** One page of a project's entries, newest first; `nextCursor` continues with older ones. */
export async function listAudit(ctx: AppContext, operator: OperatorIdentity, projectId: string, q: AuditQuery) {
  const project = await loadMemberProject(ctx, operator, projectId);
  const filter = filterOf(q, q.limit + 1);
  const rows = await ctx.db.read({ projectId: project.id, keyKind: 'operator' }, (db) => listEntries(db, project.id, filter));
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return { items: page.map(entryView), nextCursor: rows.length > q.limit && last ? String(last.seq) : null };
}

const EXPORT_PAGE = 500;

/**
 * Every entry matching the filters (newest first) as NDJSON, one line per entry, read a page
 * at a time as the client reads (backpressure through the Readable).
 */
export async function exportAudit(ctx: AppContext, operator: OperatorIdentity, projectId: string, q: Omit<AuditQuery, 'limit' | 'cursor'>): Promise<Readable> {
  const project = await loadMemberProject(ctx, operator, projectId);
  const base = filterOf(q, EXPORT_PAGE);
  async function* lines() {
    let beforeSeq: number | undefined;
    for (;;) {
      const rows = await ctx.db.read({ projectId: project.id, keyKind: 'operator' }, (db) => listEntries(db, project.id, { ...base, beforeSeq }));
      for (const r of rows) yield `${JSON.stringify(entryView(r))}\n`;
      if (rows.length < EXPORT_PAGE) return;
      beforeSeq = Number(rows[rows.length - 1]!.seq);
    }
  }
  return Readable.from(lines());
}

export type BreakReason = 'hash_mismatch' | 'prev_hash_mismatch' | 'seq_gap' | 'head_mismatch';

export interface VerifyResult {
  ok: boolean;
  /** Entries checked. */
  checked: number;
  /** The newest entry's seq and hash as the head row records them (note it elsewhere to detect a rewrite of the whole chain). */
  head: { seq: number; hash: string };
  /** Where verification started: the seq and hash of the last entry the retention trim removed (0 and the genesis hash when none). */
  anchor: { seq: number; hash: string };
  /** The first entry that does not follow from the one before it (null when ok). */
  broken: null | { reason: BreakReason; id: string | null; seq: number | null; at: string | null; message: string };
}

const MESSAGES: Record<BreakReason, string> = {
  hash_mismatch: 'The entry was changed after it was written: its content does not give its hash.',
  prev_hash_mismatch: 'The entry does not follow the one before it: an entry was removed, inserted or changed before it.',
  seq_gap: 'Entries are missing before this one.',
  head_mismatch: 'The newest entries are missing or were added outside the log: the chain does not end where the head row says.',
};

const VERIFY_PAGE = 1000;

function contentOf(r: EntryRow): ChainedContent {
  return {
    projectId: '',
    seq: Number(r.seq),
    at: new Date(r.at),
    operatorId: r.operator_id,
    operatorEmail: r.operator_email,
    ip: r.ip,
    action: r.action,
    target: r.target,
    before: r.before ?? null,
    after: r.after ?? null,
    prevHash: r.prev_hash,
  };
}

/** Walks the project's chain from its anchor: ok, or the first entry that breaks it. */
export async function verifyAudit(ctx: AppContext, operator: OperatorIdentity, projectId: string): Promise<VerifyResult> {
  const project = await loadMemberProject(ctx, operator, projectId);
  const scope = { projectId: project.id, keyKind: 'operator' as const };
  const head = await ctx.db.read(scope, (db) => readHead(db, project.id));
  const anchor = { seq: Number(head?.anchor_seq ?? 0), hash: head?.anchor_hash ?? '' };
  const result: VerifyResult = {
    ok: true,
    checked: 0,
    head: { seq: Number(head?.seq ?? 0), hash: head?.hash ?? '' },
    anchor,
    broken: null,
  };
  const fail = (reason: BreakReason, r: EntryRow | null): VerifyResult => ({
    ...result,
    ok: false,
    broken: { reason, id: r ? String(r.id) : null, seq: r ? Number(r.seq) : null, at: r ? new Date(r.at).toISOString() : null, message: MESSAGES[reason] },
  });
  let prevSeq = anchor.seq;
  let prevHash = anchor.hash;
  // From seq 0, not the anchor: an entry slipped in below the anchor is found too.
  for (let after = 0; ;) {
    const rows = await ctx.db.read(scope, (db) => chainPage(db, project.id, after, VERIFY_PAGE));
    for (const r of rows) {
      const seq = Number(r.seq);
      if (seq !== prevSeq + 1) return fail('seq_gap', r);
      if (r.prev_hash !== prevHash) return fail('prev_hash_mismatch', r);
      if (entryHash({ ...contentOf(r), projectId: project.id }) !== r.hash) return fail('hash_mismatch', r);
      prevSeq = seq;
      prevHash = r.hash;
      result.checked++;
    }
    if (rows.length < VERIFY_PAGE) break;
    after = Number(rows[rows.length - 1]!.seq);
  }
  if (!head) return result.checked === 0 ? result : fail('head_mismatch', null);
  if (prevSeq !== Number(head.seq) || prevHash !== head.hash) return fail('head_mismatch', null);
  return result;
}

/** Removes every project's entries older than AUDIT_RETENTION_DAYS; the anchors keep verification working. */
export async function trimAudit(ctx: AppContext): Promise<number> {
  const before = new Date(ctx.clock.now().getTime() - ctx.config.audit.retentionDays * 86_400_000);
  return ctx.db.admin.transaction().execute((tx) => trimBefore(tx, before));
}
