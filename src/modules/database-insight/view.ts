/**
 * Catalog rows → the dashboard's wire shapes. Field names are PostgreSQL's own (pg_policies,
 * pg_stat_user_indexes, pg_stat_user_tables, pg_stat_statements), so a DBA matches them with
 * the views; sizes and counters are numbers, times ISO strings.
 */
import type { MigrationStatus } from '../../db/migration-status.js';
import type { IndexRow, PolicyRow, StatementRow, TableRow } from './queries.js';

const n = (v: string | number) => Number(v);
const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** How `est_bloat_bytes` is estimated (docs/dashboard.md, "Database"). */
export const BLOAT_METHOD = 'dead_tuple_ratio' as const;

export function policyView(r: PolicyRow, collection: string | null) {
  return {
    schemaname: r.schemaname,
    tablename: r.tablename,
    policyname: r.policyname,
    permissive: r.permissive,
    roles: r.roles,
    cmd: r.cmd,
    qual: r.qual,
    with_check: r.with_check,
    collection,
    scope: collection === null ? ('shared' as const) : ('partition' as const),
  };
}

export function indexView(r: IndexRow, collection: string | null) {
  return {
    tablename: r.tablename,
    collection,
    indexname: r.indexname,
    indexdef: r.indexdef,
    size_bytes: n(r.size_bytes),
    idx_scan: n(r.idx_scan),
    idx_tup_read: n(r.idx_tup_read),
    idx_tup_fetch: n(r.idx_tup_fetch),
    is_unique: r.is_unique,
    is_valid: r.is_valid,
  };
}

export function tableView(r: TableRow, collection: string | null) {
  const live = n(r.n_live_tup);
  const dead = n(r.n_dead_tup);
  const heap = n(r.heap_bytes);
  const ratio = live + dead > 0 ? dead / (live + dead) : 0;
  return {
    tablename: r.tablename,
    collection,
    total_bytes: n(r.total_bytes),
    heap_bytes: heap,
    toast_bytes: n(r.toast_bytes),
    indexes_bytes: n(r.indexes_bytes),
    n_live_tup: live,
    n_dead_tup: dead,
    n_mod_since_analyze: n(r.n_mod_since_analyze),
    dead_ratio: Math.round(ratio * 10000) / 10000,
    est_bloat_bytes: Math.round(heap * ratio),
    last_vacuum: iso(r.last_vacuum),
    last_autovacuum: iso(r.last_autovacuum),
    last_analyze: iso(r.last_analyze),
    last_autoanalyze: iso(r.last_autoanalyze),
    vacuum_count: n(r.vacuum_count),
    autovacuum_count: n(r.autovacuum_count),
  };
}

const ms = (v: number) => Math.round(Number(v) * 1000) / 1000;

export function statementView(r: StatementRow) {
  return {
    queryid: r.queryid,
    query: r.query,
    calls: n(r.calls),
    total_exec_time: ms(r.total_exec_time),
    mean_exec_time: ms(r.mean_exec_time),
    max_exec_time: ms(r.max_exec_time),
    rows: n(r.rows),
    shared_blks_hit: n(r.shared_blks_hit),
    shared_blks_read: n(r.shared_blks_read),
  };
}

export function migrationView(s: MigrationStatus) {
  return {
    inSync: s.inSync,
    drift: s.drift,
    counts: s.counts,
    migrations: s.migrations.map((m) => ({
      name: m.name,
      state: m.state,
      appliedAt: iso(m.appliedAt),
      recordedChecksum: m.recordedChecksum,
      fileChecksum: m.fileChecksum,
    })),
  };
}
