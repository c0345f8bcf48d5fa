/**
 * Pooler benchmark (`npm run bench -- pooler`; opt-in, not in the default run): Plinth on
 * PostgreSQL directly against Plinth through PgBouncer in `pool_mode = transaction`, on the
 * real programs (the rig of test/pool/servers.ts: Debian's PostgreSQL 15 and PgBouncer 1.18).
 * Plinth nodes run in this process; the load generator (autocannon) in a child process.
 *
 * 1. What a request costs the database, per mode: round trips and Parse messages on the tenant
 *    connection (a counting proxy in front of it), round trips on the direct connection, and
 *    the statements PostgreSQL ran (pg_stat_statements), for each of bench/data.ts's workloads.
 * 2. One node, 50 connections, the four workloads on one project (bench/data.ts's shape):
 *    direct with named prepared statements (the default without a pooler), direct with unnamed
 *    statements only (DATABASE_PREPARED_STATEMENTS=off: what the pooler mode gives up, apart
 *    from the hop), and through PgBouncer (20 server connections, a node's tenant pool).
 * 3. Many clients, few server connections: 10 nodes in this process (20 tenant connections each:
 *    200 database clients), 200 HTTP connections spread over the nodes and 20 projects. Directly,
 *    PostgreSQL holds a backend for every client; through PgBouncer it holds 10.
 *
 * BENCH_SECONDS (default 6) per run, BENCH_COST_REQUESTS (default 100) per cost row,
 * BENCH_PARTS=cost,single,many to run some parts only. Numbers on a shared 2-core machine
 * measure overhead and correctness, not a speed-up: everything (PostgreSQL, PgBouncer, Plinth,
 * the load generator) shares the same two cores.
 */
import { load, type LoadResult } from './lib/load.js';
import {
  COST_REQUESTS,
  PROJECTS,
  SECONDS,
  WORKLOAD_NAMES,
  exitUnlessRigCanRun,
  fmt,
  runRigParts,
  measureCost,
  pgbouncerAdmin,
  printBreakdowns,
  request,
  samplePrimary,
  startCostProxies,
  startNode,
  variants,
  type Cost,
  type PlinthNode,
  type Rig,
  type Workload,
} from './lib/pool-rig.js';

exitUnlessRigCanRun();

const WORKLOADS: Workload[] = ['list', 'get', 'create', 'update'];
/** Rounds of part 2 (the modes alternate): one run says little on a shared machine. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** PgBouncer's server connections for parts 1 and 2: one node's tenant pool. */
const SINGLE_SERVER_CONNECTIONS = 20;
const MANY_NODES = 10;
const MANY_CLIENTS = 200;
const MANY_SERVER_CONNECTIONS = 10;

interface Mode {
  name: string;
  /** DATABASE_* settings for the tenant server URL `tenant` and the primary's `direct`. */
  env(tenant: string, direct: string): Record<string, string>;
  pooler: boolean;
}

const DIRECT: Mode = { name: 'PostgreSQL directly', pooler: false, env: (t, d) => ({ DATABASE_URL: t, DATABASE_DIRECT_URL: d, DATABASE_PREPARED_STATEMENTS: 'on' }) };
const UNNAMED: Mode = {
  name: 'PostgreSQL directly, unnamed statements',
  pooler: false,
  env: (t, d) => ({ DATABASE_URL: t, DATABASE_DIRECT_URL: d, DATABASE_PREPARED_STATEMENTS: 'off' }),
};
const POOLER: Mode = { name: 'PgBouncer (transaction mode)', pooler: true, env: (t, d) => ({ DATABASE_URL: t, DATABASE_DIRECT_URL: d }) };

const out = (...lines: string[]) => console.log(lines.join('\n'));
const row = (...cells: Array<string | number>) => out(`| ${cells.join(' | ')} |`);
const rps = (r: LoadResult) => r.rps.toFixed(0);

async function withNode<T>(rig: Rig, env: Record<string, string>, fn: (node: PlinthNode) => Promise<T>): Promise<T> {
  const node = await startNode(rig, env);
  try {
    return await fn(node);
  } finally {
    await node.close();
  }
}

async function costs(rig: Rig): Promise<void> {
  const proxies = await startCostProxies(rig.servers);
  const p = rig.servers.primary.url();
  const b = rig.servers.pgbouncer.url();
  const first = rig.projects.slice(0, 1);
  const rows: Array<{ label: string; cost: Cost }> = [];
  out(
    `### 1. Database cost per request (${COST_REQUESTS} requests one after another, in steady state)\n`,
    'Counted by a proxy in front of each connection string (round trips = simple queries + Syncs; Parse = statements parsed afresh) and by pg_stat_statements on the servers; background queries (replica poller, bus heartbeat) measured over an idle interval as long and taken off.\n',
    '| mode | workload | tenant round trips | tenant Parse | direct (platform) round trips | statements on the primary | of which scope | non-2xx |',
    '|---|---|---|---|---|---|---|---|',
  );
  try {
    for (const mode of [DIRECT, UNNAMED, POOLER]) {
      const px = mode.pooler ? proxies.forPooler : proxies.forPrimary;
      const env = mode.env(px.tenant.via(mode.pooler ? b : p), px.direct.via(p));
      await withNode(rig, env, async (node) => {
        for (const w of WORKLOADS) {
          const cost = await measureCost(node, rig.servers, { tenant: px.tenant, direct: px.direct }, () => request(w, first));
          rows.push({ label: `${mode.name}, ${w}`, cost });
          row(mode.name, WORKLOAD_NAMES[w], fmt(cost.tenantTrips), fmt(cost.tenantParses), fmt(cost.directTrips), fmt(cost.primaryStatements), fmt(cost.scopeStatements), cost.failed);
        }
      });
    }
  } finally {
    await proxies.close();
  }
  printBreakdowns(rows);
}

async function single(rig: Rig): Promise<void> {
  const p = rig.servers.primary.url();
  const first = rig.projects.slice(0, 1);
  out(
    `\n### 2. One node, 50 connections, one project (${first[0]!.ids.length} documents), ${SECONDS} s per run (after a 2 s warm-up), ${ROUNDS} rounds\n`,
    `PgBouncer: ${SINGLE_SERVER_CONNECTIONS} server connections (the node's tenant pool is 20). The modes alternate, round after round; req/s is the mean of the rounds (each round's in brackets), p50 / p99 the worst round's.\n`,
    '| workload | direct req/s | p50 / p99 ms | direct, unnamed req/s | p50 / p99 ms | PgBouncer req/s | p50 / p99 ms | PgBouncer ÷ direct | non-2xx |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  const results = new Map<string, LoadResult[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of [DIRECT, UNNAMED, POOLER]) {
      const env = mode.env(mode.pooler ? rig.servers.pgbouncer.url() : p, p);
      await withNode(rig, env, async (node) => {
        for (const w of WORKLOADS) {
          const v = variants(() => request(w, first));
          await load({ url: node.url, seconds: 2, variants: v });
          const r = await load({ url: node.url, seconds: SECONDS, variants: v });
          results.set(`${mode.name}/${w}`, [...(results.get(`${mode.name}/${w}`) ?? []), r]);
        }
      });
    }
  }
  const mean = (rs: LoadResult[]) => rs.reduce((s, r) => s + r.rps, 0) / rs.length;
  const cells = (rs: LoadResult[]) => [
    `${mean(rs).toFixed(0)} (${rs.map(rps).join(' / ')})`,
    `${Math.max(...rs.map((r) => r.p50))} / ${Math.max(...rs.map((r) => r.p99))}`,
  ];
  for (const w of WORKLOADS) {
    const [d, u, b] = [DIRECT, UNNAMED, POOLER].map((m) => results.get(`${m.name}/${w}`)!);
    const bad = [...d!, ...u!, ...b!].reduce((s, r) => s + r.non2xx + r.errors, 0);
    row(WORKLOAD_NAMES[w], ...cells(d!), ...cells(u!), ...cells(b!), `${(mean(b!) / mean(d!)).toFixed(2)}×`, bad);
  }
}

async function many(rig: Rig): Promise<void> {
  const p = rig.servers.primary.url();
  await pgbouncerAdmin(rig.servers, `SET default_pool_size = ${MANY_SERVER_CONNECTIONS}`, 'RECONNECT plinth');
  out(
    `\n### 3. ${MANY_CLIENTS} database clients: ${MANY_NODES} nodes × 20 tenant connections, ${MANY_CLIENTS} HTTP connections over the nodes and ${PROJECTS} projects, ${SECONDS} s per run\n`,
    `PgBouncer: ${MANY_SERVER_CONNECTIONS} server connections. Peaks sampled every 250 ms during the run: PostgreSQL client backends on the database (the nodes' direct connections included: owner pool and bus, up to 9 a node), the memory of all its processes (PSS), PgBouncer's server connections and clients waiting for one.\n`,
    '| mode | workload | req/s | p50 / p99 ms | non-2xx | PostgreSQL client backends, all (peak) | PostgreSQL memory, MB PSS (peak) | PgBouncer server connections / clients waiting (peak) |',
    '|---|---|---|---|---|---|---|---|',
  );
  for (const mode of [DIRECT, POOLER]) {
    const env = mode.env(mode.pooler ? rig.servers.pgbouncer.url() : p, p);
    const nodes: PlinthNode[] = [];
    try {
      for (let i = 0; i < MANY_NODES; i++) nodes.push(await startNode(rig, env));
      const urls = nodes.map((n) => n.url);
      for (const w of ['get', 'list', 'update'] as Workload[]) {
        const v = variants(() => request(w, rig.projects), 1000);
        await load({ url: urls, connections: MANY_CLIENTS, seconds: 2, variants: v });
        const sampler = samplePrimary(rig.servers, mode.pooler);
        const r = await load({ url: urls, connections: MANY_CLIENTS, seconds: SECONDS, variants: v });
        const peak = await sampler.stop();
        row(mode.name, WORKLOAD_NAMES[w], rps(r), `${r.p50} / ${r.p99}`, r.non2xx + r.errors, peak.backends, peak.pssMb.toFixed(0), mode.pooler ? `${peak.serverConns} / ${peak.clientsWaiting}` : '—');
      }
    } finally {
      for (const n of nodes) await n.close().catch(() => {});
    }
  }
}

await runRigParts(SINGLE_SERVER_CONNECTIONS, [['cost', costs], ['single', single], ['many', many]]);
