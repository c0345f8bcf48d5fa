/** A project's database, read-only: policies, indexes, tables, slowest statements (docs/dashboard.md "Database"). */
import { Type, type TSchema } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { operatorOf } from '../../operators/auth.js';
import { projectIndexes, projectPolicies, projectStatements, projectTables } from '../service.js';

const Params = Type.Object({ projectId: Type.String() });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const envelope = <T extends TSchema>(data: T) => Type.Object({ success: Type.Boolean(), data, message: Type.String() });
const Collection = Nullable(Type.String({ description: 'the collection whose partition this is; null for a shared tenant table' }));
const Bytes = (description: string) => Type.Number({ description });
const When = (description: string) => Nullable(Type.String({ format: 'date-time', description }));

const Policy = Type.Object({
  schemaname: Type.String(),
  tablename: Type.String(),
  policyname: Type.String(),
  permissive: Type.String({ description: '`PERMISSIVE` or `RESTRICTIVE`' }),
  roles: Type.Array(Type.String()),
  cmd: Type.String({ description: '`ALL`, `SELECT`, `INSERT`, `UPDATE` or `DELETE`' }),
  qual: Nullable(Type.String({ description: 'the USING expression, as pg_policies prints it' })),
  with_check: Nullable(Type.String({ description: 'the WITH CHECK expression, as pg_policies prints it' })),
  collection: Collection,
  scope: Type.Union([Type.Literal('partition'), Type.Literal('shared')]),
});

const Index = Type.Object({
  tablename: Type.String(),
  collection: Collection,
  indexname: Type.String(),
  indexdef: Type.String({ description: 'pg_get_indexdef' }),
  size_bytes: Bytes('pg_relation_size of the index'),
  idx_scan: Type.Number({ description: 'scans since the statistics were last reset' }),
  idx_tup_read: Type.Number(),
  idx_tup_fetch: Type.Number(),
  is_unique: Type.Boolean(),
  is_valid: Type.Boolean(),
});

const Table = Type.Object({
  tablename: Type.String(),
  collection: Collection,
  total_bytes: Bytes('pg_total_relation_size: heap, TOAST and indexes'),
  heap_bytes: Bytes('pg_relation_size'),
  toast_bytes: Bytes('the TOAST table and its index'),
  indexes_bytes: Bytes('pg_indexes_size'),
  n_live_tup: Type.Number(),
  n_dead_tup: Type.Number(),
  n_mod_since_analyze: Type.Number(),
  dead_ratio: Type.Number({ description: 'n_dead_tup / (n_live_tup + n_dead_tup), 0 to 1' }),
  est_bloat_bytes: Bytes('heap_bytes × dead_ratio: an estimate (see bloatMethod)'),
  last_vacuum: When('last manual VACUUM'),
  last_autovacuum: When('last autovacuum'),
  last_analyze: When('last manual ANALYZE'),
  last_autoanalyze: When('last autoanalyze'),
  vacuum_count: Type.Number(),
  autovacuum_count: Type.Number(),
});

const Statement = Type.Object({
  queryid: Type.String(),
  query: Type.String({ description: "normalised by pg_stat_statements: constants are $1, $2, …" }),
  calls: Type.Number(),
  total_exec_time: Type.Number({ description: 'milliseconds' }),
  mean_exec_time: Type.Number({ description: 'milliseconds' }),
  max_exec_time: Type.Number({ description: 'milliseconds' }),
  rows: Type.Number(),
  shared_blks_hit: Type.Number(),
  shared_blks_read: Type.Number(),
});

export default async function projectDatabaseRoutes(app: App, ctx: AppContext): Promise<void> {
  const tags = ['dashboard: database'];

  app.get(
    '/api/projects/:projectId/database/policies',
    {
      schema: {
        tags,
        summary: "The row-level-security policies of the project's partitions and of the shared tenant tables, as pg_policies holds them",
        description: "Shared tables' policies made for one project (the users collection's rules on app_users) appear only for that project. Read-only.",
        params: Params,
        response: { 200: envelope(Type.Object({ policies: Type.Array(Policy) })) },
      },
    },
    async (req) => ok(await projectPolicies(ctx, operatorOf(req), req.params.projectId), 'Policies'),
  );

  app.get(
    '/api/projects/:projectId/database/indexes',
    {
      schema: {
        tags,
        summary: "The indexes of the project's partitions, with size and use counts",
        params: Params,
        response: { 200: envelope(Type.Object({ indexes: Type.Array(Index) })) },
      },
    },
    async (req) => ok(await projectIndexes(ctx, operatorOf(req), req.params.projectId), 'Indexes'),
  );

  app.get(
    '/api/projects/:projectId/database/tables',
    {
      schema: {
        tags,
        summary: "The project's partitions: sizes, live and dead tuples, estimated bloat, last vacuum and analyze",
        params: Params,
        response: {
          200: envelope(Type.Object({ bloatMethod: Type.Literal('dead_tuple_ratio', { description: 'how est_bloat_bytes is estimated' }), tables: Type.Array(Table) })),
        },
      },
    },
    async (req) => ok(await projectTables(ctx, operatorOf(req), req.params.projectId), 'Tables'),
  );

  app.get(
    '/api/projects/:projectId/database/statements',
    {
      schema: {
        tags,
        summary: "The slowest statements that touch the project's partitions (pg_stat_statements), slowest mean first",
        description:
          'Only plain DML statements (whose constants pg_stat_statements replaces with $n) that name this project\'s partitions and no other project\'s; statements on shared tables mix every project\'s calls and are never shown. `available: false` (with the reason) when pg_stat_statements is not installed or not loaded.',
        params: Params,
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })) }),
        response: {
          200: envelope(Type.Object({ available: Type.Boolean(), reason: Nullable(Type.String()), statements: Type.Array(Statement) })),
        },
      },
    },
    async (req) => ok(await projectStatements(ctx, operatorOf(req), req.params.projectId, req.query.limit ?? 20), 'Statements'),
  );
}
