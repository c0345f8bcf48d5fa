/**
 * Every SQL statement of the database view (docs/dashboard.md, "Database"): PostgreSQL's
 * catalogs and statistics views (pg_policies, pg_stat_user_indexes, pg_stat_user_tables,
 * pg_stat_statements) for one project's partitions (`documents_<collectionId>`) and the shared
 * tenant tables. Read-only: nothing here writes, and the service runs them in a READ ONLY
 * transaction with a statement timeout. On the owner pool (the catalogs are not tenant data).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';

type Db = Kysely<Database>;

/** A partition's name pattern (partition-queries.ts `partitionName`). */
const PARTITION_RE = '^documents_[0-9a-f]{24}$';

/** Read only, and no statement longer than `ms` (this transaction only). */
export async function readOnlyWithin(db: Db, ms: number): Promise<void> {
  await sql`SET TRANSACTION READ ONLY`.execute(db);
  await sql`SELECT set_config('statement_timeout', ${String(ms)}, true)`.execute(db);
}

export interface PartitionRow {
  collection_id: string;
  collection: string;
  tablename: string;
}

/** The project's collections that have a partition, with its name. */
export async function projectPartitions(db: Db, projectId: string): Promise<PartitionRow[]> {
  const { rows } = await sql<PartitionRow>`
    SELECT c.id AS collection_id, c.name AS collection, 'documents_' || c.id AS tablename
      FROM collections c
     WHERE c.project_id = ${projectId} AND to_regclass(quote_ident('documents_' || c.id)) IS NOT NULL
     ORDER BY c.name`.execute(db);
  return rows;
}

export interface PolicyRow {
  schemaname: string;
  tablename: string;
  policyname: string;
  permissive: string;
  roles: string[];
  cmd: string;
  qual: string | null;
  with_check: string | null;
}

/**
 * pg_policies as PostgreSQL holds them, for the project's partitions and the shared tenant
 * tables (every table of the schema with policies that is not a partition). Of the shared
 * tables' policies, those made for one project (named `…_<projectId>`: the users collection's
 * rules on app_users, sql/40_auth_policies.sql) only when made for this one.
 */
export async function policiesOf(db: Db, projectId: string, partitions: string[]): Promise<PolicyRow[]> {
  const { rows } = await sql<PolicyRow>`
    SELECT p.schemaname::text, p.tablename::text, p.policyname::text, p.permissive, p.roles::text[] AS roles, p.cmd, p.qual, p.with_check
      FROM pg_policies p
     WHERE p.schemaname = current_schema()
       AND (p.tablename = ANY(${partitions}::text[])
            OR p.tablename !~ ${PARTITION_RE}
               AND (p.policyname !~ '_[0-9a-f]{24}$' OR right(p.policyname, 25) = '_' || ${projectId}::text))
     ORDER BY p.tablename ~ ${PARTITION_RE} DESC, p.tablename, p.policyname`.execute(db);
  return rows;
}

export interface IndexRow {
  tablename: string;
  indexname: string;
  indexdef: string;
  size_bytes: string;
  idx_scan: string;
  idx_tup_read: string;
  idx_tup_fetch: string;
  is_unique: boolean;
  is_valid: boolean;
}

/** The partitions' indexes: definition, size (pg_relation_size) and use counts since the statistics were reset. */
export async function indexesOf(db: Db, partitions: string[]): Promise<IndexRow[]> {
  const { rows } = await sql<IndexRow>`
    SELECT s.relname::text AS tablename, s.indexrelname::text AS indexname, pg_get_indexdef(s.indexrelid) AS indexdef,
           pg_relation_size(s.indexrelid) AS size_bytes, s.idx_scan, s.idx_tup_read, s.idx_tup_fetch,
           i.indisunique AS is_unique, i.indisvalid AS is_valid
      FROM pg_stat_user_indexes s
      JOIN pg_index i ON i.indexrelid = s.indexrelid
     WHERE s.schemaname = current_schema() AND s.relname = ANY(${partitions}::text[])
     ORDER BY s.relname, s.indexrelname`.execute(db);
  return rows;
}

export interface TableRow {
  tablename: string;
  total_bytes: string;
  heap_bytes: string;
  toast_bytes: string;
  indexes_bytes: string;
  n_live_tup: string;
  n_dead_tup: string;
  n_mod_since_analyze: string;
  last_vacuum: Date | null;
  last_autovacuum: Date | null;
  last_analyze: Date | null;
  last_autoanalyze: Date | null;
  vacuum_count: string;
  autovacuum_count: string;
}

/** The partitions' sizes (total, heap, TOAST, indexes), live and dead tuples, last (auto)vacuum and (auto)analyze. */
export async function tablesOf(db: Db, partitions: string[]): Promise<TableRow[]> {
  const { rows } = await sql<TableRow>`
    SELECT s.relname::text AS tablename,
           pg_total_relation_size(s.relid) AS total_bytes,
           pg_relation_size(s.relid) AS heap_bytes,
           coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) AS toast_bytes,
           pg_indexes_size(s.relid) AS indexes_bytes,
           s.n_live_tup, s.n_dead_tup, s.n_mod_since_analyze,
           s.last_vacuum, s.last_autovacuum, s.last_analyze, s.last_autoanalyze, s.vacuum_count, s.autovacuum_count
      FROM pg_stat_user_tables s
      JOIN pg_class c ON c.oid = s.relid
     WHERE s.schemaname = current_schema() AND s.relname = ANY(${partitions}::text[])
     ORDER BY pg_total_relation_size(s.relid) DESC, s.relname`.execute(db);
  return rows;
}

/** The schema pg_stat_statements is installed in, or null when it is not installed in this database. */
export async function statementsExtension(db: Db): Promise<string | null> {
  const { rows } = await sql<{ schema: string }>`
    SELECT n.nspname::text AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_stat_statements'`.execute(db);
  return rows[0]?.schema ?? null;
}

export interface StatementRow {
  queryid: string;
  query: string;
  calls: string;
  total_exec_time: number;
  mean_exec_time: number;
  max_exec_time: number;
  rows: string;
  shared_blks_hit: string;
  shared_blks_read: string;
}

/**
 * The slowest statements (by mean execution time) of this database that name one of the
 * partitions and no other project's partition, and are plain DML (SELECT, INSERT, UPDATE,
 * DELETE, WITH): pg_stat_statements replaces their constants with $n. Utility statements (DDL,
 * CREATE POLICY, COPY…) are kept as written, constants included, so they are never shown.
 */
export async function slowestStatements(db: Db, schema: string, partitions: string[], limit: number): Promise<StatementRow[]> {
  const { rows } = await sql<StatementRow>`
    SELECT s.queryid::text AS queryid, s.query, s.calls, s.total_exec_time, s.mean_exec_time, s.max_exec_time, s.rows,
           s.shared_blks_hit, s.shared_blks_read
      FROM ${sql.table(`${schema}.pg_stat_statements`)} s
     WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND s.query ~* '^\\s*(select|insert|update|delete|with)\\M'
       AND EXISTS (SELECT 1 FROM unnest(${partitions}::text[]) AS t (name) WHERE s.query ~ ('\\m' || t.name || '\\M'))
       AND NOT EXISTS (SELECT 1 FROM regexp_matches(s.query, 'documents_[0-9a-f]{24}', 'g') AS m (found)
                        WHERE NOT (m.found[1] = ANY(${partitions}::text[])))
     ORDER BY s.mean_exec_time DESC, s.queryid
     LIMIT ${limit}`.execute(db);
  return rows;
}
