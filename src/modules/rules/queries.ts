/** SQL of access rules: the collections a rule may name, and storing a collection's rules. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { RulesBroken, RulesConfig } from '../../db/types.js';
import { isObjectId } from '../../lib/ids.js';
import { partitionName } from '../collections/partition-queries.js';

type Db = Kysely<Database>;

/** Every collection of the project (a rule's lookups resolve among these, never another project's). */
export function projectCollections(db: Db, projectId: string) {
  return db.selectFrom('collections').select(['id', 'name', 'fields', 'rules_sql']).where('project_id', '=', projectId).execute();
}

/** The project's collections that have rules, with the rules as written (what a deletion or schema change may break). */
export function collectionsWithRules(db: Db, projectId: string) {
  return db
    .selectFrom('collections')
    .select(['id', 'name', 'fields', 'rules', 'rules_broken'])
    .where('project_id', '=', projectId)
    .where('rules', 'is not', null)
    .orderBy('name')
    .execute();
}

/**
 * Stores the rules and their compiled SQL; the trigger of sql/20_documents_policies.sql
 * rebuilds the partition's policies in the same transaction (a bad SQL text fails the update).
 * `broken`: the actions still marked broken (their compiled SQL is `false`); a save clears them.
 */
export function setRules(db: Db, collectionId: string, rules: RulesConfig | null, compiled: Partial<RulesConfig> | null, now: Date, broken: RulesBroken | null = null) {
  return db
    .updateTable('collections')
    .set({
      rules: rules && JSON.stringify(rules),
      rules_sql: compiled && JSON.stringify(compiled),
      rules_broken: broken && JSON.stringify(broken),
      updated_at: now.toISOString(),
    })
    .where('id', '=', collectionId)
    .returning(['name', 'rules', 'rules_sql'])
    .executeTakeFirstOrThrow();
}

/**
 * Marks actions of a collection's rules broken (sql/20_documents_policies.sql): their compiled
 * SQL becomes `false` (deny) with `reason`, and the trigger rebuilds the policies.
 */
export async function markRulesBroken(db: Db, collectionId: string, actions: string[], reason: string): Promise<void> {
  await sql`SELECT plinth_mark_rules_broken(${collectionId}, ${actions}::text[], ${reason})`.execute(db);
}

/** The partition's policies as PostgreSQL holds them (what a DBA sees in pg_policies). */
export async function partitionPolicies(db: Db, collectionId: string) {
  const res = await sql<{ policyname: string; cmd: string; roles: string[]; qual: string | null; with_check: string | null }>`
    SELECT policyname, cmd, roles::text[] AS roles, qual, with_check FROM pg_policies
    WHERE schemaname = current_schema() AND tablename = ${`documents_${collectionId}`} ORDER BY policyname`.execute(db);
  return res.rows;
}

/**
 * The app_users policies of one project: the shared ones and those compiled from its users
 * rules (`app_users_<action>_<projectId>`, sql/40_auth_policies.sql).
 */
export async function userPolicies(db: Db, projectId: string) {
  const res = await sql<{ policyname: string; cmd: string; roles: string[]; qual: string | null; with_check: string | null }>`
    SELECT policyname, cmd, roles::text[] AS roles, qual, with_check FROM pg_policies
    WHERE schemaname = current_schema() AND tablename = 'app_users'
      AND (policyname IN ('app_users_tenant', 'app_users_full', 'app_users_unruled') OR policyname LIKE ${`app_users_%_${projectId}`})
    ORDER BY policyname`.execute(db);
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

/** Whether `userId` is an end user of the project (the preview's "as user X"). */
export async function projectUserExists(db: Db, projectId: string, userId: string): Promise<boolean> {
  const row = await db.selectFrom('app_users').select('id').where('project_id', '=', projectId).where('id', '=', userId).executeTakeFirst();
  return !!row;
}

/** Whether the collection holds a live document `id`, whoever may see it (the owner's view). */
export async function documentExists(db: Db, collectionId: string, id: string): Promise<boolean> {
  const res = await sql<{ id: string }>`SELECT id FROM ${sql.raw(partitionName(collectionId))} WHERE id = ${id} AND deleted_at IS NULL`.execute(db);
  return res.rows.length > 0;
}

export interface PreviewScope {
  projectId: string;
  userId: string | null;
}

class RolledBack<T> extends Error {
  constructor(readonly value: T) {
    super('rolled back');
  }
}

/**
 * Runs `fn` under candidate rules, then rolls everything back (docs/rules.md, "Preview"): in one
 * owner transaction the collection's rules are replaced (its trigger rebuilds the partition's
 * policies), then the transaction becomes a publishable caller (role and scope settings, all
 * LOCAL) and `fn` runs what the API would, under the real policies. Nothing is committed; the
 * policy change takes the partition's lock for the few milliseconds the transaction lasts
 * (lock_timeout bounds the wait behind long readers).
 */
export async function underCandidateRules<T>(
  db: Db,
  collectionId: string,
  candidate: { rules: RulesConfig | null; compiled: Partial<RulesConfig> | null },
  scope: PreviewScope,
  fn: (tx: Db) => Promise<T>,
): Promise<T> {
  try {
    await db.transaction().execute(async (tx) => {
      await sql`SET LOCAL lock_timeout = '1s'`.execute(tx);
      await sql`SET LOCAL statement_timeout = '3s'`.execute(tx);
      await tx
        .updateTable('collections')
        .set({ rules: candidate.rules && JSON.stringify(candidate.rules), rules_sql: candidate.compiled && JSON.stringify(candidate.compiled) })
        .where('id', '=', collectionId)
        .execute();
      await sql`SET LOCAL ROLE plinth_api_publishable`.execute(tx);
      await sql`SELECT set_config('plinth.project_id', ${scope.projectId}, true), set_config('plinth.user_id', ${scope.userId ?? ''}, true),
                       set_config('plinth.key_kind', 'publishable', true)`.execute(tx);
      throw new RolledBack(await fn(tx));
    });
  } catch (err) {
    if (err instanceof RolledBack) return err.value as T;
    throw err;
  }
  throw new Error('unreachable');
}

/** Live documents the caller sees (the read policy), with the list rule when it narrows the view rule: how many, and the newest ids. */
export async function previewList(tx: Db, projectId: string, collectionId: string, extra: string | null, limit: number) {
  const where = sql.raw(`project_id = '${projectId}' AND deleted_at IS NULL${extra ? ` AND (${extra})` : ''}`);
  const table = sql.raw(partitionName(collectionId));
  const count = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`.execute(tx);
  const ids = await sql<{ id: string }>`SELECT id FROM ${table} WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit}`.execute(tx);
  return { count: count.rows[0]?.n ?? 0, ids: ids.rows.map((r) => r.id) };
}

/** Whether the caller sees document `id`. */
export async function previewVisible(tx: Db, collectionId: string, id: string): Promise<boolean> {
  const res = await sql<{ id: string }>`SELECT id FROM ${sql.raw(partitionName(collectionId))} WHERE id = ${id} AND deleted_at IS NULL`.execute(tx);
  return res.rows.length > 0;
}

/** The write the API would make (insert, data update, soft delete), on the partition under its policies: rows written. */
export async function previewWrite(
  tx: Db,
  w: { collectionId: string; projectId: string } & (
    | { op: 'create'; id: string; ownerId: string | null; data: string }
    | { op: 'update'; id: string; data: string }
    | { op: 'delete'; id: string }
  ),
): Promise<number> {
  const table = sql.raw(partitionName(w.collectionId));
  const res =
    w.op === 'create'
      ? await sql`INSERT INTO ${table} (project_id, collection_id, id, owner_id, data) VALUES (${w.projectId}, ${w.collectionId}, ${w.id}, ${w.ownerId}, ${w.data}::jsonb)`.execute(tx)
      : w.op === 'update'
        ? await sql`UPDATE ${table} SET data = data || ${w.data}::jsonb WHERE id = ${w.id} AND deleted_at IS NULL`.execute(tx)
        : await sql`UPDATE ${table} SET deleted_at = now() WHERE id = ${w.id} AND deleted_at IS NULL`.execute(tx);
  return Number(res.numAffectedRows ?? 0);
}
