/**
 * The DBA's view of a project (docs/dashboard.md, "Database"): its partitions' row-level-security
 * policies exactly as PostgreSQL holds them, their indexes and tables with sizes and statistics,
 * the slowest statements that touch them (when pg_stat_statements is installed), and, for the
 * admin, the migrations applied with their checksums and any drift. Knows no HTTP.
 *
 * Read-only: each read is one READ ONLY transaction on the owner pool with a statement timeout
 * (a catalog read never holds a connection long). Nothing shown is a secret: policy expressions
 * are the server's compiled rules (names, the operator's own rule literals, scope functions:
 * src/modules/rules/compile.ts), never key hashes, encrypted columns or connection strings.
 */
import type { AppContext } from '../../context.js';
import { sqlState } from '../../db/errors.js';
import { MIGRATIONS_DIR } from '../../db/migrate.js';
import { migrationStatus } from '../../db/migration-status.js';
import type { Tx } from '../../db/pool.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { loadMemberProject } from '../projects/access.js';
import { DatabaseInsightErrors } from './errors.js';
import { indexesOf, policiesOf, projectPartitions, readOnlyWithin, slowestStatements, statementsExtension, tablesOf, type PartitionRow } from './queries.js';
import { indexView, migrationView, policyView, statementView, tableView, BLOAT_METHOD } from './view.js';

/** Longest a catalog or statistics statement may run. */
const STATEMENT_TIMEOUT_MS = 5000;

async function readCatalog<T>(ctx: AppContext, fn: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await ctx.db.admin.transaction().execute(async (tx) => {
      await readOnlyWithin(tx, STATEMENT_TIMEOUT_MS);
      return fn(tx);
    });
  } catch (err) {
    if (sqlState(err) === '57014') throw DatabaseInsightErrors.database_insight_timeout();
    throw err;
  }
}

/** The project (owned by the operator, 404 otherwise) and its partitions, then `fn` on them. */
async function withPartitions<T>(ctx: AppContext, operator: OperatorIdentity, projectId: string, fn: (tx: Tx, parts: PartitionRow[], projectId: string) => Promise<T>): Promise<T> {
  const project = await loadMemberProject(ctx, operator, projectId);
  return readCatalog(ctx, async (tx) => fn(tx, await projectPartitions(tx, project.id), project.id));
}

const collectionOf = (parts: PartitionRow[]) => {
  const byTable = new Map(parts.map((p) => [p.tablename, p.collection]));
  return (table: string) => byTable.get(table) ?? null;
};

export async function projectPolicies(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  return withPartitions(ctx, operator, projectId, async (tx, parts, id) => {
    const rows = await policiesOf(tx, id, parts.map((p) => p.tablename));
    const collection = collectionOf(parts);
    return { policies: rows.map((r) => policyView(r, collection(r.tablename))) };
  });
}

export async function projectIndexes(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  return withPartitions(ctx, operator, projectId, async (tx, parts) => {
    const rows = await indexesOf(tx, parts.map((p) => p.tablename));
    const collection = collectionOf(parts);
    return { indexes: rows.map((r) => indexView(r, collection(r.tablename))) };
  });
}

export async function projectTables(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  return withPartitions(ctx, operator, projectId, async (tx, parts) => {
    const rows = await tablesOf(tx, parts.map((p) => p.tablename));
    const collection = collectionOf(parts);
    return { bloatMethod: BLOAT_METHOD, tables: rows.map((r) => tableView(r, collection(r.tablename))) };
  });
}

/**
 * Why pg_stat_statements cannot be read: not installed in this database, or installed but not
 * loaded (shared_preload_libraries; SQLSTATE 55000), or not readable by the owner role (42501).
 */
const UNAVAILABLE = new Map([
  ['55000', 'pg_stat_statements is installed but not loaded: add it to shared_preload_libraries and restart PostgreSQL.'],
  ['42501', "The database owner role may not read pg_stat_statements (grant it pg_read_all_stats)."],
]);

export async function projectStatements(ctx: AppContext, operator: OperatorIdentity, projectId: string, limit: number) {
  const project = await loadMemberProject(ctx, operator, projectId);
  const schema = await readCatalog(ctx, (tx) => statementsExtension(tx));
  if (schema === null) return { available: false as const, reason: 'pg_stat_statements is not installed in this database (CREATE EXTENSION pg_stat_statements).', statements: [] };
  try {
    const rows = await readCatalog(ctx, async (tx) => {
      const parts = await projectPartitions(tx, project.id);
      return parts.length ? slowestStatements(tx, schema, parts.map((p) => p.tablename), limit) : [];
    });
    return { available: true as const, reason: null, statements: rows.map(statementView) };
  } catch (err) {
    const reason = UNAVAILABLE.get(sqlState(err) ?? '');
    if (reason) return { available: false as const, reason, statements: [] };
    throw err;
  }
}

/** The admin's view: every migration applied, with its recorded and current checksums, and drift. */
export async function migrations(ctx: AppContext) {
  return migrationView(await migrationStatus(ctx.db.pool, MIGRATIONS_DIR));
}
