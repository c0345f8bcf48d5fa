/**
 * Database: the DBA's read-only view of the project (docs/dashboard.md "Database"): its
 * partitions' row-level-security policies exactly as PostgreSQL holds them (pg_policies), their
 * indexes and tables with sizes and statistics, the slowest statements that touch them
 * (pg_stat_statements, when installed) and, for the platform admin, the migrations applied with
 * their checksums and any drift (the same as `plinth migrate --status`).
 */
import type { ComponentChildren } from 'preact';
import { api, projectPath } from '../lib/api';
import { bytes, dateTime, plural } from '../lib/format';
import { href } from '../lib/router';
import { me } from '../lib/session';
import { useLoad } from '../lib/use-load';
import { Empty, Loadable, PageHead } from '../components/ui';
import type { SectionProps } from './project-shell';

interface Policy {
  schemaname: string;
  tablename: string;
  policyname: string;
  permissive: string;
  roles: string[];
  cmd: string;
  qual: string | null;
  with_check: string | null;
  collection: string | null;
  scope: 'partition' | 'shared';
}

interface Index {
  tablename: string;
  collection: string | null;
  indexname: string;
  indexdef: string;
  size_bytes: number;
  idx_scan: number;
  idx_tup_read: number;
  idx_tup_fetch: number;
  is_unique: boolean;
  is_valid: boolean;
}

interface Table {
  tablename: string;
  collection: string | null;
  total_bytes: number;
  heap_bytes: number;
  toast_bytes: number;
  indexes_bytes: number;
  n_live_tup: number;
  n_dead_tup: number;
  dead_ratio: number;
  est_bloat_bytes: number;
  last_vacuum: string | null;
  last_autovacuum: string | null;
  last_analyze: string | null;
  last_autoanalyze: string | null;
}

interface Statement {
  queryid: string;
  query: string;
  calls: number;
  total_exec_time: number;
  mean_exec_time: number;
  max_exec_time: number;
  rows: number;
}

interface Migration {
  name: string;
  state: 'ok' | 'changed' | 'missing' | 'unknown' | 'pending';
  appliedAt: string | null;
  recordedChecksum: string | null;
  fileChecksum: string | null;
}

interface MigrationStatus {
  inSync: boolean;
  drift: boolean;
  counts: Record<Migration['state'], number>;
  migrations: Migration[];
}

type Tab = 'policies' | 'indexes' | 'tables' | 'statements' | 'migrations';

const TABS: Array<[Tab, string]> = [
  ['policies', 'Policies'],
  ['indexes', 'Indexes'],
  ['tables', 'Tables'],
  ['statements', 'Slow statements'],
  ['migrations', 'Migrations'],
];

const ms = (v: number) => `${v < 10 ? v.toFixed(2) : Math.round(v)} ms`;
const count = (v: number) => v.toLocaleString();
const latest = (a: string | null, b: string | null) => (a && b ? (a > b ? a : b) : (a ?? b));
const when = (iso: string | null) => (iso ? dateTime(iso) : 'never');
function TableName({ t }: { t: { tablename: string; collection: string | null } }) {
  return t.collection ? <><span>{t.collection}</span> <span class="muted small mono">({t.tablename})</span></> : <span class="mono">{t.tablename}</span>;
}

export default function Database({ project, rest }: SectionProps) {
  const admin = !!me.value?.isAdmin;
  const tabs = TABS.filter(([t]) => t !== 'migrations' || admin);
  const tab: Tab = tabs.find(([t]) => t === rest[0])?.[0] ?? 'policies';
  const pid = project._id;
  return (
    <section aria-labelledby="db-title" class="dbview">
      <PageHead title="Database" />
      <h2 id="db-title" class="sr-only">Database</h2>
      <p class="muted">
        What PostgreSQL holds for this project, read-only: the row-level-security policies its access rules compiled to, the indexes and tables of its collections' partitions, and the slowest statements on them.
      </p>
      <nav class="tabs" aria-label="Database sections">
        {tabs.map(([t, label]) => <a key={t} href={href('p', pid, 'database', t)} aria-current={tab === t ? 'page' : undefined}>{label}</a>)}
      </nav>
      {tab === 'policies' && <Policies pid={pid} />}
      {tab === 'indexes' && <Indexes pid={pid} />}
      {tab === 'tables' && <Tables pid={pid} />}
      {tab === 'statements' && <Statements pid={pid} />}
      {tab === 'migrations' && admin && <Migrations />}
    </section>
  );
}

function Grid({ label, children, head }: { label: string; head: string[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      <table class="grid stack-table">
        <caption class="sr-only">{label}</caption>
        <thead>
          <tr>{head.map((h) => <th key={h} scope="col">{h}</th>)}</tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

function Sql({ text }: { text: string | null }) {
  return text === null ? <span class="muted">—</span> : <code class="sql">{text}</code>;
}

function PolicyRows({ label, rows }: { label: string; rows: Policy[] }) {
  return (
    <Grid label={label} head={['Table', 'Policy', 'Command', 'Kind', 'Roles', 'USING', 'WITH CHECK']}>
      {rows.map((p) => (
        <tr key={`${p.tablename}.${p.policyname}`}>
          <td data-label="Table" class="tbl"><TableName t={p} /></td>
          <td data-label="Policy" class="mono">{p.policyname}</td>
          <td data-label="Command">{p.cmd}</td>
          <td data-label="Kind">{p.permissive.toLowerCase()}</td>
          <td data-label="Roles" class="mono">{p.roles.join(', ')}</td>
          <td data-label="USING"><Sql text={p.qual} /></td>
          <td data-label="WITH CHECK"><Sql text={p.with_check} /></td>
        </tr>
      ))}
    </Grid>
  );
}

function Policies({ pid }: { pid: string }) {
  const state = useLoad((signal) => api.get<{ policies: Policy[] }>(projectPath(pid, 'database', 'policies'), signal), [pid]);
  return (
    <Loadable state={state}>
      {({ policies }) => {
        const own = policies.filter((p) => p.scope === 'partition');
        const shared = policies.filter((p) => p.scope === 'shared');
        return (
          <>
            <h3>Collections' partitions</h3>
            <p class="muted small">Each collection's documents live in its own partition; its access rules are these policies, as <code>pg_policies</code> prints them.</p>
            {own.length ? <PolicyRows label="Policies of the collections' partitions" rows={own} /> : <Empty title="No collection yet" />}
            <details class="db-shared">
              <summary>Shared tenant tables ({plural(shared.length, 'policy', 'policies')})</summary>
              <p class="muted small">Tables every project's rows share (users, files, mail…): each policy keeps a project to its own rows.</p>
              <PolicyRows label="Policies of the shared tenant tables" rows={shared} />
            </details>
          </>
        );
      }}
    </Loadable>
  );
}

function Indexes({ pid }: { pid: string }) {
  const state = useLoad((signal) => api.get<{ indexes: Index[] }>(projectPath(pid, 'database', 'indexes'), signal), [pid]);
  return (
    <Loadable state={state}>
      {({ indexes }) => indexes.length === 0 ? <Empty title="No index yet" /> : (
        <>
          <p class="muted small">Scans and tuples read count since PostgreSQL's statistics were last reset; an index never scanned costs writes and space for nothing.</p>
          <Grid label="Indexes" head={['Table', 'Index', 'Size', 'Scans', 'Tuples read', 'Definition']}>
            {indexes.map((i) => (
              <tr key={i.indexname} class={i.is_valid ? undefined : 'failed'}>
                <td data-label="Table" class="tbl"><TableName t={i} /></td>
                <td data-label="Index" class="mono">{i.indexname}{i.is_valid ? '' : ' (invalid)'}</td>
                <td data-label="Size" class="num">{bytes(i.size_bytes)}</td>
                <td data-label="Scans" class="num">{count(i.idx_scan)}</td>
                <td data-label="Tuples read" class="num">{count(i.idx_tup_read)}</td>
                <td data-label="Definition"><Sql text={i.indexdef} /></td>
              </tr>
            ))}
          </Grid>
        </>
      )}
    </Loadable>
  );
}

function Tables({ pid }: { pid: string }) {
  const state = useLoad((signal) => api.get<{ bloatMethod: string; tables: Table[] }>(projectPath(pid, 'database', 'tables'), signal), [pid]);
  return (
    <Loadable state={state}>
      {({ tables }) => tables.length === 0 ? <Empty title="No collection yet" /> : (
        <>
          <p class="muted small">Estimated bloat is the heap's share of dead tuples (dead ÷ (live + dead)): space VACUUM can reclaim for new rows. Tuple counts are PostgreSQL's estimates.</p>
          <Grid label="Tables" head={['Table', 'Total', 'Heap', 'TOAST', 'Indexes', 'Live tuples', 'Dead tuples', 'Estimated bloat', 'Last vacuum', 'Last analyze']}>
            {tables.map((t) => (
              <tr key={t.tablename}>
                <td data-label="Table" class="tbl"><TableName t={t} /></td>
                <td data-label="Total" class="num">{bytes(t.total_bytes)}</td>
                <td data-label="Heap" class="num">{bytes(t.heap_bytes)}</td>
                <td data-label="TOAST" class="num">{bytes(t.toast_bytes)}</td>
                <td data-label="Indexes" class="num">{bytes(t.indexes_bytes)}</td>
                <td data-label="Live tuples" class="num">{count(t.n_live_tup)}</td>
                <td data-label="Dead tuples" class="num">{count(t.n_dead_tup)}</td>
                <td data-label="Estimated bloat" class="num">{bytes(t.est_bloat_bytes)} ({Math.round(t.dead_ratio * 100)}%)</td>
                <td data-label="Last vacuum">{when(latest(t.last_vacuum, t.last_autovacuum))}</td>
                <td data-label="Last analyze">{when(latest(t.last_analyze, t.last_autoanalyze))}</td>
              </tr>
            ))}
          </Grid>
        </>
      )}
    </Loadable>
  );
}

function Statements({ pid }: { pid: string }) {
  const state = useLoad(
    (signal) => api.get<{ available: boolean; reason: string | null; statements: Statement[] }>(`${projectPath(pid, 'database', 'statements')}?limit=20`, signal),
    [pid],
  );
  return (
    <Loadable state={state}>
      {(s) => !s.available ? (
        <Empty title="Statement statistics are not available">
          <p>{s.reason}</p>
        </Empty>
      ) : s.statements.length === 0 ? (
        <Empty title="No statement recorded on this project's collections yet" />
      ) : (
        <>
          <p class="muted small">From <code>pg_stat_statements</code>, slowest mean first: only statements on this project's partitions, with their values replaced by $1, $2… Statements on shared tables mix every project's calls and are not shown.</p>
          <Grid label="Slowest statements" head={['Mean', 'Max', 'Calls', 'Total', 'Rows', 'Statement']}>
            {s.statements.map((q) => (
              <tr key={q.queryid}>
                <td data-label="Mean" class="num">{ms(q.mean_exec_time)}</td>
                <td data-label="Max" class="num">{ms(q.max_exec_time)}</td>
                <td data-label="Calls" class="num">{count(q.calls)}</td>
                <td data-label="Total" class="num">{ms(q.total_exec_time)}</td>
                <td data-label="Rows" class="num">{count(q.rows)}</td>
                <td data-label="Statement"><Sql text={q.query} /></td>
              </tr>
            ))}
          </Grid>
        </>
      )}
    </Loadable>
  );
}

const STATE_TEXT: Record<Migration['state'], string> = {
  ok: 'applied',
  changed: 'changed since applied',
  missing: 'no such file in this version',
  unknown: 'no checksum recorded',
  pending: 'pending',
};

function Migrations() {
  const state = useLoad((signal) => api.get<MigrationStatus>('/api/admin/database/migrations', signal), []);
  return (
    <Loadable state={state}>
      {(s) => (
        <>
          <p role="status" class={s.drift ? 'db-verdict drift' : 'db-verdict'}>
            {s.drift
              ? `Drift: ${s.counts.changed} changed, ${s.counts.missing} missing, ${s.counts.unknown} without a checksum.`
              : s.inSync ? `In sync: ${plural(s.counts.ok, 'migration')} applied, each file as it was when applied.` : `${s.counts.pending} pending: run plinth migrate.`}
          </p>
          <p class="muted small">The whole platform's database (not only this project), as <code>plinth migrate --status</code> prints it. Checksums are SHA-256 of each file.</p>
          <Grid label="Migrations" head={['Migration', 'State', 'Applied', 'Checksum when applied', 'Checksum of the file now']}>
            {s.migrations.map((m) => (
              <tr key={m.name} class={m.state === 'ok' || m.state === 'pending' ? undefined : 'failed'}>
                <td data-label="Migration" class="mono">{m.name}</td>
                <td data-label="State"><span class={m.state === 'ok' ? 'status-ok' : m.state === 'pending' ? undefined : 'status-err'}>{STATE_TEXT[m.state]}</span></td>
                <td data-label="Applied">{m.appliedAt ? dateTime(m.appliedAt) : '—'}</td>
                <td data-label="Checksum when applied" class="mono checksum">{m.recordedChecksum ?? '—'}</td>
                <td data-label="Checksum of the file now" class="mono checksum">{m.fileChecksum ?? '—'}</td>
              </tr>
            ))}
          </Grid>
        </>
      )}
    </Loadable>
  );
}
