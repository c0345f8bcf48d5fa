/** Every SQL statement of the audit log (migrations/070_audit_log.sql). */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import { GENESIS_HASH, type ChainedContent } from './chain.js';

type Db = Kysely<Database>;

/**
 * The project's head row, locked until the transaction ends (created at the first entry): every
 * writer of one project waits here for the one before it, so the chain never forks.
 */
export async function lockHead(tx: Db, projectId: string): Promise<{ seq: number; hash: string }> {
  await tx
    .insertInto('audit_heads')
    .values({ project_id: projectId, seq: 0, hash: GENESIS_HASH, anchor_hash: GENESIS_HASH })
    .onConflict((oc) => oc.column('project_id').doNothing())
    .execute();
  return tx.selectFrom('audit_heads').select(['seq', 'hash']).where('project_id', '=', projectId).forUpdate().executeTakeFirstOrThrow();
}

/** A chained entry as stored: what its hash covers (chain.ts), and the hash. */
export interface EntryValues extends ChainedContent {
  hash: string;
}

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

export async function insertEntry(tx: Db, e: EntryValues): Promise<string> {
  const row = await tx
    .insertInto('audit_entries')
    .values({
      project_id: e.projectId,
      seq: e.seq,
      at: e.at,
      operator_id: e.operatorId,
      operator_email: e.operatorEmail,
      ip: e.ip,
      action: e.action,
      target: e.target,
      before: json(e.before),
      after: json(e.after),
      prev_hash: e.prevHash,
      hash: e.hash,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await tx.updateTable('audit_heads').set({ seq: e.seq, hash: e.hash }).where('project_id', '=', e.projectId).execute();
  return row.id;
}

export interface EntryFilter {
  action?: string;
  /** `prefix.`: every action starting with it (`functions.` for all of the functions'). */
  actionPrefix?: string;
  operator?: string;
  target?: string;
  from?: Date;
  to?: Date;
  /** Entries older than this seq (the cursor). */
  beforeSeq?: number;
  limit: number;
}

const COLUMNS = ['id', 'seq', 'at', 'operator_id', 'operator_email', 'ip', 'action', 'target', 'before', 'after', 'prev_hash', 'hash'] as const;

/** A project's entries matching the filter, newest first (its tenant scope shows no other's). */
export function listEntries(db: Db, projectId: string, f: EntryFilter) {
  let q = db.selectFrom('audit_entries').select(COLUMNS).where('project_id', '=', projectId);
  if (f.action !== undefined) q = q.where('action', '=', f.action);
  if (f.actionPrefix !== undefined) q = q.where(sql<boolean>`starts_with(action, ${f.actionPrefix})`);
  if (f.operator !== undefined) {
    const op = f.operator;
    q = q.where((eb) => eb.or([eb('operator_id', '=', op), eb(eb.fn('lower', ['operator_email']), '=', op.toLowerCase())]));
  }
  if (f.target !== undefined) q = q.where('target', '=', f.target);
  if (f.from !== undefined) q = q.where('at', '>=', f.from);
  if (f.to !== undefined) q = q.where('at', '<=', f.to);
  if (f.beforeSeq !== undefined) q = q.where('seq', '<', f.beforeSeq);
  return q.orderBy('seq', 'desc').limit(f.limit).execute();
}

export type EntryRow = Awaited<ReturnType<typeof listEntries>>[number];

/** The head row as stored (null before the first entry). */
export function readHead(db: Db, projectId: string) {
  return db.selectFrom('audit_heads').select(['seq', 'hash', 'anchor_seq', 'anchor_hash']).where('project_id', '=', projectId).executeTakeFirst();
}

/** A page of the chain in seq order, after `afterSeq` (verification). */
export function chainPage(db: Db, projectId: string, afterSeq: number, limit: number) {
  return db.selectFrom('audit_entries').select(COLUMNS).where('project_id', '=', projectId).where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
}

/**
 * The retention trim, one statement for every project: per project, the newest entry older
 * than `before` becomes the anchor (its seq and hash in the head row), and it and every entry
 * before it in the chain are deleted. The head rows' update locks them, so it waits for (and
 * is waited for by) the project's writers. Runs in the caller's transaction, which says it is
 * the trim (the table's guard trigger refuses other deletes).
 */
export async function trimBefore(tx: Db, before: Date): Promise<number> {
  await sql`SELECT set_config('plinth.audit_trim', 'on', true)`.execute(tx);
  const res = await sql`
    WITH cut AS (
      SELECT DISTINCT ON (project_id) project_id, seq, hash
        FROM audit_entries
       WHERE at < ${before}
       ORDER BY project_id, seq DESC
    ), anchored AS (
      UPDATE audit_heads h SET anchor_seq = cut.seq, anchor_hash = cut.hash
        FROM cut
       WHERE h.project_id = cut.project_id AND cut.seq > h.anchor_seq
      RETURNING h.project_id, cut.seq
    )
    DELETE FROM audit_entries e USING anchored a
     WHERE e.project_id = a.project_id AND e.seq <= a.seq`.execute(tx);
  return Number(res.numAffectedRows ?? 0);
}
