/** SQL of access rules: the collections a rule may name, and storing a collection's rules. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { RulesConfig } from '../../db/types.js';
import { isObjectId } from '../../lib/ids.js';
import { partitionName } from '../collections/partition-queries.js';

type Db = Kysely<Database>;

/** Every collection of the project (a rule's lookups resolve among these, never another project's). */
export function projectCollections(db: Db, projectId: string) {
  return db.selectFrom('collections').select(['id', 'name', 'fields']).where('project_id', '=', projectId).execute();
}

/**
 * Stores the rules and their compiled SQL; the trigger of sql/20_documents_policies.sql
 * rebuilds the partition's policies in the same transaction (a bad SQL text fails the update).
 */
export function setRules(db: Db, collectionId: string, rules: RulesConfig | null, compiled: Partial<RulesConfig> | null, now: Date) {
  return db
    .updateTable('collections')
    .set({ rules: rules && JSON.stringify(rules), rules_sql: compiled && JSON.stringify(compiled), updated_at: now.toISOString() })
    .where('id', '=', collectionId)
    .returning(['name', 'rules', 'rules_sql'])
    .executeTakeFirstOrThrow();
}

/** The partition's policies as PostgreSQL holds them (what a DBA sees in pg_policies). */
export async function partitionPolicies(db: Db, collectionId: string) {
  const res = await sql<{ policyname: string; cmd: string; roles: string[]; qual: string | null; with_check: string | null }>`
    SELECT policyname, cmd, roles::text[] AS roles, qual, with_check FROM pg_policies
    WHERE schemaname = current_schema() AND tablename = ${`documents_${collectionId}`} ORDER BY policyname`.execute(db);
  return res.rows;
}

/**
 * The plan of `statement` (compiled by the server, never client text) in the caller's
 * transaction, with sequential scans priced out (`SET LOCAL`): the plan still reads a whole
 * partition only when no index can serve the condition. EXPLAIN without ANALYZE runs nothing.
 */
export async function planWithoutSeqScans(tx: Db, statement: string): Promise<string> {
  await sql`SET LOCAL enable_seqscan = off`.execute(tx);
  const res = await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${sql.raw(statement)}`.execute(tx);
  return res.rows.map((r) => r['QUERY PLAN']).join('\n');
}

/**
 * A list of the collection as its API runs it, minus the page (`extra`: the list rule when it
 * differs from the view rule; server-compiled SQL). No `deleted_at IS NULL`: every partition's
 * partial created_at index matches that, and the planner would walk it whatever the rule says.
 */
export function listStatement(projectId: string, collectionId: string, extra: string | null): string {
  if (!isObjectId(projectId)) throw new Error('bad project id');
  return `SELECT id FROM ${partitionName(collectionId)} WHERE project_id = '${projectId}'${extra ? ` AND (${extra})` : ''}`;
}

/** The document accessors of rules and indexes that are not LEAKPROOF (a database set up without a superuser). */
export async function leakyAccessors(db: Db): Promise<string[]> {
  const res = await sql<{ proname: string }>`
    SELECT DISTINCT proname FROM pg_proc
    WHERE proname IN ('plinth_num', 'plinth_txt', 'plinth_key') AND NOT proleakproof ORDER BY proname`.execute(db);
  return res.rows.map((r) => r.proname);
}
