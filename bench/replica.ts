/**
 * Replica benchmark (`npm run bench -- replica`; opt-in, not in the default run): lag-tolerant
 * reads on the primary alone against the same with one streaming standby taking them
 * (DATABASE_READ_URL), on the real programs (the rig of test/pool/servers.ts: Debian's
 * PostgreSQL 15 primary and a pg_basebackup standby streaming from it). Plinth runs in this
 * process, the load generator (autocannon) in a child process.
 *
 * 1. What a request costs each server: round trips on the tenant, direct and replica
 *    connections (counting proxies) and the statements each server ran (pg_stat_statements).
 * 2. One node, 50 connections over 20 projects: list and get with the publishable key, and a
 *    read-heavy mix (19 gets for 1 update); where the reads went, from /metrics
 *    (`plinth_db_lag_tolerant_reads_total`), and the replica's lag at its polls.
 * 3. Read-after-write: a create (secret key) then at once a get of it (publishable key), one
 *    pair after another, with the after-write window (default 5 s), with no window and no
 *    header (what the window protects against), and with no window but the
 *    `Plinth-Commit-Position` header sent back.
 *
 * BENCH_SECONDS (default 6) per run, BENCH_COST_REQUESTS (default 100) per cost row,
 * BENCH_PAIRS (default 200) per read-after-write row, BENCH_PARTS=cost,load,raw. On a shared
 * 2-core machine the standby takes CPU from the primary: the point is the overhead, where the
 * reads go and that they stay correct, not a speed-up.
 */
import { COMMIT_POSITION_HEADER } from '../src/db/replicas.js';
import { load, type LoadRequest, type LoadResult } from './lib/load.js';
import {
  COST_REQUESTS,
  PROJECTS,
  SECONDS,
  WORKLOAD_NAMES,
  describeServedBy,
  difference,
  exitUnlessRigCanRun,
  fmt,
  inject,
  runRigParts,
  measureCost,
  printBreakdowns,
  request,
  servedBy,
  sleep,
  startCostProxies,
  startNode,
  variants,
  type Cost,
  type PlinthNode,
  type Rig,
  type Workload,
} from './lib/pool-rig.js';

exitUnlessRigCanRun();

const PAIRS = Number(process.env.BENCH_PAIRS ?? 200);

interface Mode {
  name: string;
  env(primary: string, standby: string): Record<string, string>;
}
const ALONE: Mode = { name: 'primary alone', env: (p) => ({ DATABASE_URL: p }) };
const WITH_REPLICA: Mode = { name: 'primary + 1 replica', env: (p, s) => ({ DATABASE_URL: p, DATABASE_READ_URL: s }) };

const out = (...lines: string[]) => console.log(lines.join('\n'));
const row = (...cells: Array<string | number>) => out(`| ${cells.join(' | ')} |`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function withNode<T>(rig: Rig, env: Record<string, string>, fn: (node: PlinthNode) => Promise<T>): Promise<T> {
  const node = await startNode(rig, env);
  try {
    return await fn(node);
  } finally {
    await node.close();
  }
}

/** Waits for the node's first replica poll to find the standby up (reads go to the primary until then). */
async function replicaUp(node: PlinthNode): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (node.ctx.db.replicas?.stats().replicas.every((r) => r.up)) return;
    await sleep(100);
  }
  throw new Error('the node never saw the standby up');
}

async function costs(rig: Rig): Promise<void> {
  const proxies = await startCostProxies(rig.servers);
  const px = proxies.forPrimary;
  const rows: Array<{ label: string; cost: Cost }> = [];
  out(
    `### 1. Database cost per request (${COST_REQUESTS} requests one after another, in steady state)\n`,
    'Round trips counted by a proxy in front of each connection string, statements by pg_stat_statements on each server; background queries (replica poller, bus heartbeat) measured over an idle interval as long and taken off. The writes are measured after the reads (a write keeps its project on the primary for DATABASE_READ_AFTER_WRITE_MS).\n',
    '| mode | workload | tenant round trips (primary) | replica round trips | direct round trips | statements on the primary | statements on the standby | of which scope | non-2xx |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  try {
    for (const mode of [ALONE, WITH_REPLICA]) {
      const env = mode.env(px.tenant.via(rig.servers.primary.url()), px.replica!.via(rig.servers.standby.url()));
      // Two URLs to one server: keep the default without a pooler (named prepared statements).
      env.DATABASE_DIRECT_URL = px.direct.via(rig.servers.primary.url());
      env.DATABASE_PREPARED_STATEMENTS = 'on';
      await withNode(rig, env, async (node) => {
        if (mode === WITH_REPLICA) await replicaUp(node);
        for (const w of ['list', 'get', 'create', 'update'] as Workload[]) {
          const cost = await measureCost(node, rig.servers, px, () => request(w, rig.projects), 10 * PROJECTS);
          rows.push({ label: `${mode.name}, ${w}`, cost });
          row(mode.name, WORKLOAD_NAMES[w], fmt(cost.tenantTrips), fmt(cost.replicaTrips), fmt(cost.directTrips), fmt(cost.primaryStatements), fmt(cost.standbyStatements), fmt(cost.scopeStatements), cost.failed);
        }
      });
    }
  } finally {
    await proxies.close();
  }
  printBreakdowns(rows);
}

/** 19 gets (pk) for 1 update (sk), each on a random project. */
const mixed = (rig: Rig): LoadRequest => request(Math.random() < 0.05 ? 'update' : 'get', rig.projects);

async function loads(rig: Rig): Promise<void> {
  out(
    `\n### 2. One node, 50 connections over ${PROJECTS} projects, ${SECONDS} s per run (after a 2 s warm-up)\n`,
    'Where the lag-tolerant reads went: `plinth_db_lag_tolerant_reads_total` from the node\'s /metrics, the difference over the run. Replica lag: the largest the node saw at its 500 ms polls during the run.\n',
    '| mode | workload | req/s | p50 / p99 ms | non-2xx | reads served by | replica lag (max) |',
    '|---|---|---|---|---|---|---|',
  );
  const runs: Array<[string, () => LoadRequest]> = [
    [WORKLOAD_NAMES.list, () => request('list', rig.projects)],
    [WORKLOAD_NAMES.get, () => request('get', rig.projects)],
    ['read-heavy: 95 % get (pk), 5 % update (sk)', () => mixed(rig)],
  ];
  const rates = new Map<string, number>();
  for (const mode of [ALONE, WITH_REPLICA]) {
    await withNode(rig, mode.env(rig.servers.primary.url(), rig.servers.standby.url()), async (node) => {
      if (mode === WITH_REPLICA) await replicaUp(node);
      for (const [name, make] of runs) {
        const v = variants(make, 1000);
        await load({ url: node.url, seconds: 2, variants: v });
        // The mix's warm-up writes must not keep projects on the primary into the measured run.
        if (mode === WITH_REPLICA && name.startsWith('read-heavy')) await sleep(node.ctx.config.replicas.afterWriteMs + 500);
        let maxLag = 0;
        const lagTimer = setInterval(() => {
          for (const r of node.ctx.db.replicas?.stats().replicas ?? []) maxLag = Math.max(maxLag, r.lagSeconds ?? 0);
        }, 250);
        const before = await servedBy(node);
        const r: LoadResult = await load({ url: node.url, seconds: SECONDS, variants: v });
        clearInterval(lagTimer);
        const served = difference(await servedBy(node), before);
        rates.set(`${mode.name}/${name}`, r.rps);
        row(mode.name, name, r.rps.toFixed(0), `${r.p50} / ${r.p99}`, r.non2xx + r.errors, mode === WITH_REPLICA ? describeServedBy(served) : 'the primary (no replica)', mode === WITH_REPLICA ? `${(maxLag * 1000).toFixed(0)} ms` : '—');
      }
    });
  }
  out('', 'With a replica ÷ primary alone (req/s):', ...runs.map(([name]) => `- ${name}: ${(rates.get(`${WITH_REPLICA.name}/${name}`)! / rates.get(`${ALONE.name}/${name}`)!).toFixed(2)}×`));
}

async function readAfterWrite(rig: Rig): Promise<void> {
  out(
    `\n### 3. Read-after-write: ${PAIRS} pairs, each a create (sk) then at once a get of it (pk) on the same node, one pair after another over ${PROJECTS} projects\n`,
    '| setting | gets that found their document | get p50 / max ms | reads served by |',
    '|---|---|---|---|',
  );
  const configs: Array<[string, Record<string, string>, boolean]> = [
    ['after-write window 5 s (default), no header', {}, false],
    ['no window (DATABASE_READ_AFTER_WRITE_MS=0), no header', { DATABASE_READ_AFTER_WRITE_MS: '0' }, false],
    ['no window, `Plinth-Commit-Position` sent back', { DATABASE_READ_AFTER_WRITE_MS: '0' }, true],
  ];
  for (const [name, extra, header] of configs) {
    await withNode(rig, { ...WITH_REPLICA.env(rig.servers.primary.url(), rig.servers.standby.url()), ...extra }, async (node) => {
      await replicaUp(node);
      const before = await servedBy(node);
      let found = 0;
      const times: number[] = [];
      for (let i = 0; i < PAIRS; i++) {
        const p = rig.projects[i % rig.projects.length]!;
        const made = await inject(node, { method: 'POST', path: '/api/data/products', body: JSON.stringify({ name: `raw ${i}`, price: 1, category: 'c1' }), headers: p.sk });
        if (made.statusCode !== 201) throw new Error(`create answered ${made.statusCode}: ${made.body}`);
        const id = (made.json() as { _id: string })._id;
        const position = made.headers[COMMIT_POSITION_HEADER];
        const t = performance.now();
        const got = await inject(node, { path: `/api/data/products/${id}`, headers: { ...p.pk, ...(header && typeof position === 'string' ? { [COMMIT_POSITION_HEADER]: position } : {}) } });
        times.push(performance.now() - t);
        if (got.statusCode === 200) found++;
        else if (got.statusCode !== 404) throw new Error(`get answered ${got.statusCode}: ${got.body}`);
      }
      const served = difference(await servedBy(node), before);
      row(name, `${found} of ${PAIRS}`, `${median(times).toFixed(1)} / ${Math.max(...times).toFixed(1)}`, describeServedBy(served));
    });
  }
}

await runRigParts(20, [['cost', costs], ['load', loads], ['raw', readAfterWrite]]);
