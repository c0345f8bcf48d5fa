/**
 * What the pooler and replica benchmarks (bench/pooler.ts, bench/replica.ts) share: the rig of
 * test/pool/servers.ts (Debian's PostgreSQL 15 primary, a pg_basebackup standby streaming from
 * it, PgBouncer 1.18 in `pool_mode = transaction`), with pg_stat_statements loaded on both
 * servers; 20 seeded projects; Plinth nodes booted in this process against any mix of those
 * servers; and the measurements: `/metrics`' read routing, statements per request from
 * pg_stat_statements, round trips per request from a counting proxy (bench/lib/wire-count.ts),
 * and PostgreSQL's connections and memory while a load runs.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { boot, type Booted } from '../../src/boot.js';
import { loadConfig } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { buildApp, type App } from '../../src/server.js';
import { makeOperator, makeProject, type TestProject } from '../../test/helpers/fixtures.js';
import { poolRigSkipReason, startServers, type Server, type Servers } from '../../test/pool/servers.js';
import type { LoadRequest } from './load.js';
import { seedProducts } from './products.js';
import { startCountingProxy, type CountingProxy, type WireCounts } from './wire-count.js';

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
/** Projects seeded; the first has FIRST_DOCS documents (bench/data.ts's size), the others OTHER_DOCS. */
export const PROJECTS = 20;
const FIRST_DOCS = 10_000;
const OTHER_DOCS = 2_000;
/** Sequential requests per workload when counting statements and round trips. */
export const COST_REQUESTS = Number(process.env.BENCH_COST_REQUESTS ?? 100);

const METRICS_TOKEN = 'bench-pool-metrics-token-0123456789';
const SECRETS = { ENCRYPTION_KEY: 'ab'.repeat(32), DASHBOARD_JWT_SECRET: 'cd'.repeat(32), METRICS_TOKEN };
/** For both servers: statement counting, and room for 10 nodes' direct connections. */
const PG_BENCH_SETTINGS = ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track_utility=on', 'max_connections=400'];

export interface SeededProject extends TestProject {
  /** Its documents' ids in `products`. */
  ids: string[];
}

export interface Rig {
  servers: Servers;
  /** Plinth's data dir (shared by every node booted here). */
  dir: string;
  /** On the primary directly: migrations and fixtures. */
  setup: Booted;
  projects: SeededProject[];
  close(): Promise<void>;
}

export interface PlinthNode {
  app: App;
  ctx: AppContext;
  url: string;
  close(): Promise<void>;
}

/** Exits 0 with the reason when pgbouncer or PostgreSQL 15 is missing (as the rig's test skips). */
export function exitUnlessRigCanRun(): void {
  if (!poolRigSkipReason) return;
  console.log(`skipped: ${poolRigSkipReason}`);
  process.exit(0);
}

const client = async (url: string) => {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  return c;
};

async function on<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const c = await client(url);
  try {
    return (await c.query<T>(text)).rows;
  } finally {
    await c.end();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The environment of a Plinth node of the rig (`extra`: its DATABASE_* settings). */
export function nodeEnv(rig: Pick<Rig, 'dir'>, extra: Record<string, string>): Record<string, string> {
  return {
    PLINTH_DATA_DIR: rig.dir,
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    RATE_LIMIT_SCALE: '0',
    PLINTH_RUN_WORKER: 'false',
    DASHBOARD: 'false',
    DB_CONNECT_TIMEOUT_MS: '20000',
    ...SECRETS,
    ...extra,
  };
}

/** A Plinth node in this process (no migrations: the rig's setup node made them), listening on loopback. */
export async function startNode(rig: Pick<Rig, 'dir'>, extra: Record<string, string>): Promise<PlinthNode> {
  const booted = await boot(loadConfig(nodeEnv(rig, extra)), { skipMigrations: true });
  const app = await buildApp(booted.ctx);
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    app,
    ctx: booted.ctx,
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    async close() {
      await app.close();
      await booted.close();
    },
  };
}

/**
 * Starts the servers (PgBouncer with `serverConnections` server connections), migrates, seeds
 * PROJECTS projects with a `products` collection (bench/data.ts's fields and compound index)
 * and waits for the standby to have replayed it all.
 */
export async function startRig(serverConnections: number): Promise<Rig> {
  const servers = await startServers({ serverConnections, settings: PG_BENCH_SETTINGS });
  // The servers run in process groups of their own: an interrupted benchmark stops them too.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void servers.stopAll().finally(() => process.exit(130)));
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-pool-'));
  let setup: Booted | undefined;
  try {
    await on(servers.primary.url(), 'CREATE EXTENSION pg_stat_statements');
    setup = await boot(loadConfig(nodeEnv({ dir }, { DATABASE_URL: servers.primary.url() })));
    const projects: SeededProject[] = [];
    for (let i = 0; i < PROJECTS; i++) {
      const p = await makeProject(setup.ctx, await makeOperator(setup.ctx, { plan: 'pro' }));
      const docs = i === 0 ? FIRST_DOCS : OTHER_DOCS;
      const { ids } = await seedProducts(setup.ctx, p.id, { docs, indexes: [{ fields: ['category', 'price'] }], idBase: (i + 1) * 1_000_000 });
      projects.push({ ...p, ids });
    }
    await sql`ANALYZE documents`.execute(setup.ctx.db.admin);
    const total = projects.reduce((s, p) => s + p.ids.length, 0);
    for (let t = 0; ; t++) {
      const [row] = await on<{ n: number }>(servers.standby.url(), 'SELECT count(*)::int AS n FROM documents');
      if (row!.n >= total) break;
      if (t > 600) throw new Error('the standby did not replay the seeded documents within 60 s');
      await sleep(100);
    }
    const ready = setup;
    return {
      servers,
      dir,
      setup: ready,
      projects,
      async close() {
        await ready.close();
        await servers.stopAll();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await setup?.close().catch(() => {});
    await servers.stopAll();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Workloads: bench/data.ts's four, reads with the publishable key and writes with the secret key
// (as an app's frontend and backend would).

const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
const listQs = () => `category=c${Math.floor(Math.random() * 10)}&price_gte=1000&price_lt=9000`;

export type Workload = 'list' | 'get' | 'create' | 'update';
export const WORKLOAD_NAMES: Record<Workload, string> = {
  list: 'list (filter + range + sort, with total), pk',
  get: 'get by id, pk',
  create: 'create, sk',
  update: 'update (one field), sk',
};

/** One request of `workload` on one of `projects` (chosen at random). */
export function request(workload: Workload, projects: SeededProject[]): LoadRequest {
  const p = pick(projects);
  switch (workload) {
    case 'list':
      return { path: `/api/data/products?${listQs()}&sort=-price&include_total=true`, headers: p.pk };
    case 'get':
      return { path: `/api/data/products/${pick(p.ids)}`, headers: p.pk };
    case 'create':
      return { method: 'POST', path: '/api/data/products', body: JSON.stringify({ name: 'new', price: 5, category: 'c1' }), headers: p.sk };
    case 'update':
      return { method: 'PATCH', path: `/api/data/products/${pick(p.ids)}`, body: JSON.stringify({ stock: 7 }), headers: p.sk };
  }
}

/** The load generator cycles through this many prepared requests. */
export const variants = (make: () => LoadRequest, n = 500) => Array.from({ length: n }, make);

/** Sends one request in-process (no HTTP): status, body and headers. */
export async function inject(node: PlinthNode, r: LoadRequest) {
  const res = await node.app.inject({
    method: (r.method ?? 'GET') as 'GET',
    url: r.path,
    headers: { ...(r.body ? { 'content-type': 'application/json' } : {}), ...r.headers },
    payload: r.body,
  });
  return res;
}

// ---------------------------------------------------------------------------------------------
// Measurements.

/** `plinth_db_lag_tolerant_reads_total` by `served_by`, from the node's /metrics. */
export async function servedBy(node: PlinthNode): Promise<Map<string, number>> {
  const res = await node.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const out = new Map<string, number>();
  for (const m of res.body.matchAll(/^plinth_db_lag_tolerant_reads_total\{served_by="(\w+)"\} (\d+)/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

export function difference(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) !== 0) out.set(k, v - (before.get(k) ?? 0));
  return out;
}

/** "replica 9 912 (99.1 %), primary_written 88" */
export function describeServedBy(d: Map<string, number>): string {
  const total = [...d.values()].reduce((s, v) => s + v, 0);
  if (total === 0) return 'no lag-tolerant reads';
  return [...d.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v} (${((100 * v) / total).toFixed(1)} %)`)
    .join(', ');
}

/** Calls of each statement (normalized text) in the `plinth` database, pg_stat_statements' own left out. */
async function statementCalls(server: Server): Promise<Map<string, number>> {
  const rows = await on<{ query: string; calls: number }>(
    server.url(),
    `SELECT query, sum(calls)::int AS calls FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'plinth') AND query NOT ILIKE '%pg_stat_statements%'
      GROUP BY query`,
  );
  return new Map(rows.map((r) => [r.query, r.calls]));
}

async function resetStatements(server: Server): Promise<void> {
  await on(server.url(), 'SELECT pg_stat_statements_reset()');
}

export interface CostProxies {
  /** In front of DATABASE_URL's server (PostgreSQL or PgBouncer). */
  tenant: CountingProxy;
  /** In front of DATABASE_DIRECT_URL (the primary). */
  direct: CountingProxy;
  /** In front of DATABASE_READ_URL (the standby), when the mode has one. */
  replica?: CountingProxy;
}

export async function startCostProxies(servers: Servers): Promise<{ forPrimary: CostProxies; forPooler: CostProxies; close(): Promise<void> }> {
  const [tp, tb, d, r] = await Promise.all([
    startCountingProxy('127.0.0.1', servers.primary.port),
    startCountingProxy('127.0.0.1', servers.pgbouncer.port),
    startCountingProxy('127.0.0.1', servers.primary.port),
    startCountingProxy('127.0.0.1', servers.standby.port),
  ]);
  return {
    forPrimary: { tenant: tp, direct: d, replica: r },
    forPooler: { tenant: tb, direct: d, replica: r },
    close: async () => void (await Promise.all([tp, tb, d, r].map((p) => p.close()))),
  };
}

export interface Cost {
  /** Requests measured, and how many answered other than 2xx. */
  n: number;
  failed: number;
  /** Per request: round trips and Parse messages on the tenant connection, round trips on the direct and replica ones. */
  tenantTrips: number;
  tenantParses: number;
  directTrips: number;
  replicaTrips: number;
  /** Per request: statements PostgreSQL ran (pg_stat_statements), on the primary and on the standby. */
  primaryStatements: number;
  standbyStatements: number;
  /** Per request, of those: the tenant scope's (`SELECT set_config('role', …), set_config('plinth.project_id', …), …`), on either server. */
  scopeStatements: number;
  /** Per request, the statements behind those numbers (text shortened), most frequent first. */
  breakdown: Array<{ server: 'primary' | 'standby'; perRequest: number; text: string }>;
}

const SCOPE_TEXT = /^\s*SELECT set_config\([^)]*\)(, set_config\([^)]*\)){3}/i;

interface Snapshot {
  wire: Record<'tenant' | 'direct' | 'replica', WireCounts | null>;
  primary: Map<string, number>;
  standby: Map<string, number>;
}

async function countsSince(servers: Servers, proxies: CostProxies): Promise<Snapshot> {
  return {
    wire: { tenant: proxies.tenant.counts(), direct: proxies.direct.counts(), replica: proxies.replica?.counts() ?? null },
    primary: await statementCalls(servers.primary),
    standby: await statementCalls(servers.standby),
  };
}

async function resetCounts(servers: Servers, proxies: CostProxies): Promise<void> {
  await Promise.all([resetStatements(servers.primary), resetStatements(servers.standby)]);
  for (const p of [proxies.tenant, proxies.direct, proxies.replica]) p?.reset();
}

/**
 * What `make`'s requests cost the database, per request, in steady state: `warm` requests to
 * warm caches (every project's keys and collection) and prepared statements, then
 * COST_REQUESTS one after another, counted; then as long
 * again with no request, counted too, and taken off (the replica poller's queries every 500 ms
 * and the bus's heartbeat run meanwhile whatever the requests do).
 */
export async function measureCost(node: PlinthNode, servers: Servers, proxies: CostProxies, make: () => LoadRequest, warm = 20): Promise<Cost> {
  for (let i = 0; i < warm; i++) await inject(node, make());
  await resetCounts(servers, proxies);
  const start = Date.now();
  let failed = 0;
  for (let i = 0; i < COST_REQUESTS; i++) {
    const res = await inject(node, make());
    if (res.statusCode >= 300) failed++;
  }
  const busy = await countsSince(servers, proxies);
  const elapsed = Date.now() - start;
  await resetCounts(servers, proxies);
  await sleep(elapsed);
  const idle = await countsSince(servers, proxies);
  const n = COST_REQUESTS;
  const wire = (k: 'tenant' | 'direct' | 'replica', f: (w: WireCounts) => number) =>
    Math.max(0, (busy.wire[k] ? f(busy.wire[k]!) : 0) - (idle.wire[k] ? f(idle.wire[k]!) : 0)) / n;
  const perText = (b: Map<string, number>, i: Map<string, number>) => {
    const out = new Map<string, number>();
    for (const [text, calls] of b) {
      const net = calls - (i.get(text) ?? 0);
      if (net > 0) out.set(text, net / n);
    }
    return out;
  };
  const primary = perText(busy.primary, idle.primary);
  const standby = perText(busy.standby, idle.standby);
  const sum = (m: Map<string, number>) => [...m.values()].reduce((s, v) => s + v, 0);
  // pg_stat_statements shows constants as $n: the scope is the statement of four or five set_config calls.
  const scope = (m: Map<string, number>) => [...m].filter(([text]) => SCOPE_TEXT.test(text)).reduce((s, [, v]) => s + v, 0);
  const shorten = (t: string) => t.replace(/\s+/g, ' ').slice(0, 90);
  const breakdown = [
    ...[...primary].map(([text, perRequest]) => ({ server: 'primary' as const, perRequest, text: shorten(text) })),
    ...[...standby].map(([text, perRequest]) => ({ server: 'standby' as const, perRequest, text: shorten(text) })),
  ]
    .filter((b) => b.perRequest >= 0.05)
    .sort((a, b) => b.perRequest - a.perRequest);
  return {
    n,
    failed,
    tenantTrips: wire('tenant', (w) => w.roundTrips),
    tenantParses: wire('tenant', (w) => w.messages.get('parse') ?? 0),
    directTrips: wire('direct', (w) => w.roundTrips),
    replicaTrips: wire('replica', (w) => w.roundTrips),
    primaryStatements: sum(primary),
    standbyStatements: sum(standby),
    scopeStatements: scope(primary) + scope(standby),
    breakdown,
  };
}

export const fmt = (x: number, digits = 2) => x.toFixed(digits);

/** Prints a cost table's rows' breakdowns under it. */
export function printBreakdowns(rows: Array<{ label: string; cost: Cost }>): void {
  console.log('\nStatements per request behind those rows (pg_stat_statements, normalized text; ≥ 0.05 per request):\n');
  for (const { label, cost } of rows) {
    console.log(`- ${label}:`);
    for (const b of cost.breakdown) console.log(`  - ${fmt(b.perRequest)} × ${b.server}: \`${b.text}\``);
  }
}

/**
 * Samples the primary every 250 ms while a load runs: its client backends on `plinth` (this
 * sampler's own left out), the memory of all its processes (proportional set size, so shared
 * buffers count once), and with `pooler` PgBouncer's server connections and waiting clients.
 */
export function samplePrimary(servers: Servers, pooler: boolean) {
  const peak = { backends: 0, pssMb: 0, serverConns: 0, clientsWaiting: 0 };
  let running = true;
  const loop = (async () => {
    const c = await client(servers.primary.url());
    const admin = pooler ? await client(servers.pgbouncer.url('pgbouncer')) : null;
    try {
      while (running) {
        const { rows } = await c.query<{ pid: number; backend_type: string; datname: string | null; mine: boolean }>(
          'SELECT pid, backend_type, datname, pid = pg_backend_pid() AS mine FROM pg_stat_activity',
        );
        peak.backends = Math.max(peak.backends, rows.filter((r) => r.backend_type === 'client backend' && r.datname === 'plinth' && !r.mine).length);
        let pss = 0;
        for (const r of rows) pss += pssKb(r.pid);
        peak.pssMb = Math.max(peak.pssMb, pss / 1024);
        if (admin) {
          const servers_ = (await admin.query<{ database: string }>('SHOW SERVERS')).rows.filter((r) => r.database === 'plinth').length;
          const waiting = (await admin.query<{ database: string; cl_waiting: number }>('SHOW POOLS')).rows
            .filter((r) => r.database === 'plinth')
            .reduce((s, r) => s + Number(r.cl_waiting), 0);
          peak.serverConns = Math.max(peak.serverConns, servers_);
          peak.clientsWaiting = Math.max(peak.clientsWaiting, waiting);
        }
        await sleep(250);
      }
    } finally {
      await c.end().catch(() => {});
      await admin?.end().catch(() => {});
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}

/** Proportional set size of a process in kB (0 when it is gone or unreadable). */
function pssKb(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Runs PgBouncer admin console commands (SET, RECONNECT, SHOW …). */
export async function pgbouncerAdmin(servers: Servers, ...commands: string[]): Promise<void> {
  const c = await client(servers.pgbouncer.url('pgbouncer'));
  try {
    for (const cmd of commands) await c.query(cmd);
  } finally {
    await c.end();
  }
}

/** The machine's load average now, for the output's header. */
export const loadAverage = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

/**
 * The main of a rig benchmark: seeds a rig with `serverConnections` behind PgBouncer, runs the
 * parts named in BENCH_PARTS (default: all, in the order given), closes the rig and exits.
 */
export async function runRigParts(serverConnections: number, parts: Array<[name: string, run: (rig: Rig) => Promise<void>]>): Promise<never> {
  const wanted = new Set((process.env.BENCH_PARTS ?? parts.map(([name]) => name).join(',')).split(','));
  console.log(`Load average ${loadAverage()} at the start; seeding…`);
  const rig = await startRig(serverConnections);
  try {
    for (const [name, run] of parts) if (wanted.has(name)) await run(rig);
    console.log(`\nLoad average ${loadAverage()} at the end.`);
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  } finally {
    await rig.close();
  }
  // Pools and timers of the nodes closed above may linger a moment; nothing is left to wait for.
  process.exit(process.exitCode ?? 0);
}
