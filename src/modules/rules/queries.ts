/** SQL of access rules: the collections a rule may name, and storing a collection's rules. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { RulesConfig } from '../../db/types.js';

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
