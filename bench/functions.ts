/**
 * Functions (`npm run bench -- functions`, docs/functions.md), the numbers issue 47 asks for:
 *
 * - a warm HTTP function that reads one document (`plinth.data…get`), against the plain data
 *   API's get by id of the same documents (goal: at least half its rate);
 * - a before-hook's added latency on a create (p50 of one request at a time, with and without
 *   a hook that changes the data; goal: at most 1 ms more);
 * - cold start: a new version's first call (the sandbox builds its unit), and a first call on a
 *   node whose sandboxes have not started;
 * - memory: sandbox processes' resident size with 100 projects' functions called once each,
 *   and the API process's own growth;
 * - noisy neighbours: one project attacking (a loop, small-string and typed-array memory bombs,
 *   deep recursion, a constructor chain, fetch to loopback) while another project's HTTP
 *   function answers; the quiet project's p99 and the API process's RSS meanwhile.
 *
 * autocannon, 50 connections, from a separate process; one node, its default sandboxes.
 * BENCH_ONLY=throughput runs only the first pair, BENCH_ONLY=hook stops after the before-hook's p50; BENCH_ROUNDS (3) is
 * how many times the pair alternates; BENCH_PROFILE=<file> profiles the API process during the function's first run.
 */
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createCollection } from '../src/modules/collections/service.js';
import { deployFunction } from '../src/modules/functions/service.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';
import { load, type LoadRequest, type LoadResult } from './lib/load.js';
import { clusterCpuUs, processCpuUs } from './lib/proc-cpu.js';
import path from 'node:path';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DOCS = 10_000;
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 100);
const hex = (n: number) => n.toString(16).padStart(24, '0');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

runBench('functions', { PLINTH_RUN_WORKER: 'false', RATE_LIMIT_SCALE: '0' }, async ({ app, ctx }) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const p = await makeProject(ctx);
  const items = await createCollection(ctx, p.id, 'pro', { name: 'items', fields: [{ key: 'name', type: 'String' }, { key: 'n', type: 'Number' }] });
  await createCollection(ctx, p.id, 'pro', { name: 'hooked', fields: [{ key: 'title', type: 'String' }, { key: 'slug', type: 'String' }] });
  await createCollection(ctx, p.id, 'pro', { name: 'plain', fields: [{ key: 'title', type: 'String' }, { key: 'slug', type: 'String' }] });
  await sql`INSERT INTO documents (project_id, collection_id, id, data, size_bytes, created_at, updated_at)
    SELECT ${p.id}, ${items.id}, lpad(to_hex(g), 24, '0'), d, octet_length(d::text), now(), now()
    FROM generate_series(0, ${DOCS - 1}) g, LATERAL (SELECT jsonb_build_object('name', 'item ' || g, 'n', g) AS d) x`.execute(ctx.db.admin);
  await sql`ANALYZE documents`.execute(ctx.db.admin);
  await deployFunction(ctx, p.id, { name: 'item', kind: 'http', source: `export default async (req, plinth) => plinth.data.collection('items').get(req.query.id)` });
  await deployFunction(ctx, p.id, {
    name: 'slug',
    kind: 'before',
    trigger: { collection: 'hooked', events: ['create'] },
    source: `export default (e) => ({ data: { ...e.data, slug: e.data.title.toLowerCase().replace(/[^a-z0-9]+/g, '-') } })`,
  });

  // Cold: the first call on this node starts a sandbox and builds the unit.
  let t = performance.now();
  const first = await app.inject({ method: 'GET', url: `/api/functions/item?id=${hex(1)}`, headers: p.sk });
  const coldNode = performance.now() - t;
  if (first.statusCode !== 200) throw new Error(`item: ${first.statusCode} ${first.body}`);
  await deployFunction(ctx, p.id, { name: 'item2', kind: 'http', source: `export default async (req, plinth) => plinth.data.collection('items').get(req.query.id)` });
  t = performance.now();
  await app.inject({ method: 'GET', url: `/api/functions/item2?id=${hex(2)}`, headers: p.sk });
  const coldUnit = performance.now() - t;

  const rand = () => hex(Math.floor(Math.random() * DOCS));
  const gets: LoadRequest[] = Array.from({ length: 500 }, () => ({ path: `/api/data/items/${rand()}`, headers: p.sk }));
  const calls: LoadRequest[] = Array.from({ length: 500 }, () => ({ path: `/api/functions/item?id=${rand()}`, headers: p.sk }));
  // CPU per request of the API process, the sandboxes and PostgreSQL: unlike a rate, it does not
  // depend on what else the machine is running.
  const clusterDir = path.join(ctx.config.dataDir, 'pg');
  const sandboxCpu = () => ctx.functions.pool.stats().pids.reduce((sum, pid) => sum + (pid > 0 ? (processCpuUs(pid) ?? 0) : 0), 0);
  const measured = async (variants: LoadRequest[]) => {
    // Warm first: a node that has served for a while holds its sandboxes' engine instances (one
    // per invocation in flight), which a cold run would build inside the measured window.
    await load({ url, seconds: 2, variants });
    const api0 = process.cpuUsage();
    const sb0 = sandboxCpu();
    const pg0 = clusterCpuUs(clusterDir) ?? 0;
    const r = await load({ url, seconds: SECONDS, variants });
    const n = r.rps * SECONDS;
    const api = process.cpuUsage(api0);
    const per = (us: number) => Math.round(us / n);
    return { ...r, cpu: `API ${per(api.user + api.system)} / sandboxes ${per(sandboxCpu() - sb0)} / PostgreSQL ${per((clusterCpuUs(clusterDir) ?? 0) - pg0)} µs` };
  };
  // The pair alternates BENCH_ROUNDS times (get, function, get, function, …) and the round with
  // the median ratio is reported: a drift of the machine over the run (another process, CPU
  // frequency) then falls on both sides instead of on one.
  // BENCH_PROFILE=<file>: a CPU profile of the API process while the function is measured in the
  // first round (the profiler samples wall time: read it on a quiet machine, or preemption shows
  // as system calls).
  const profiler = process.env.BENCH_PROFILE ? new Session() : undefined;
  const rounds: Array<{ get: LoadResult & { cpu: string }; fn: LoadResult & { cpu: string } }> = [];
  for (let i = 0; i < ROUNDS; i++) {
    const get = await measured(gets);
    if (profiler && i === 0) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const fn = await measured(calls);
    if (profiler && i === 0) writeFileSync(process.env.BENCH_PROFILE!, JSON.stringify((await profiler.post('Profiler.stop')).profile));
    rounds.push({ get, fn });
  }
  const ratio = (r: (typeof rounds)[number]) => r.fn.rps / r.get.rps;
  const middle = [...rounds].sort((a, b) => ratio(a) - ratio(b))[Math.floor(rounds.length / 2)]!;
  const { get: plainGet, fn: viaFunction } = middle;
  const eachRound = rounds.map((r) => `${r.get.rps.toFixed(0)}/${r.fn.rps.toFixed(0)} = ${ratio(r).toFixed(2)}x`).join(', ');
  // BENCH_ONLY=throughput stops here: the two rates and their CPU per request.
  if (process.env.BENCH_ONLY === 'throughput') {
    console.log(`get ${plainGet.rps.toFixed(0)} req/s (${plainGet.cpu}); function ${viaFunction.rps.toFixed(0)} req/s (${viaFunction.cpu}); ${ratio(middle).toFixed(2)}x, the median of ${ROUNDS} rounds (get/function: ${eachRound})`);
    return;
  }

  // A before-hook's added latency: one create at a time, in process.
  const createP50 = async (collection: string) => {
    const times: number[] = [];
    for (let i = 0; i < 300; i++) {
      const start = process.hrtime.bigint();
      const res = await app.inject({ method: 'POST', url: `/api/data/${collection}`, headers: { ...p.sk, 'content-type': 'application/json' }, payload: { title: `Title ${i}` } });
      if (res.statusCode !== 201) throw new Error(`${collection}: ${res.statusCode} ${res.body}`);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    return median(times.slice(50));
  };
  const plainCreate = await createP50('plain');
  const hookedCreate = await createP50('hooked');
  // BENCH_ONLY=hook: the before-hook's added p50 alone (after the throughput pair's warm-up).
  if (process.env.BENCH_ONLY === 'hook') {
    console.log(`create p50 ${plainCreate.toFixed(2)} ms, with a before-hook ${hookedCreate.toFixed(2)} ms (+${(hookedCreate - plainCreate).toFixed(2)} ms)`);
    return;
  }

  // Memory: 100 projects, each with a function called once.
  const apiBefore = process.memoryUsage.rss();
  for (let i = 0; i < PROJECTS; i++) {
    const q = await makeProject(ctx);
    await deployFunction(ctx, q.id, { name: 'hello', kind: 'http', source: `export default (req) => ({ hello: ${i} })` });
    const res = await app.inject({ method: 'GET', url: '/api/functions/hello', headers: q.pk });
    if (res.statusCode !== 200) throw new Error(`hello ${i}: ${res.statusCode}`);
  }
  const pids = ctx.functions.pool.stats().pids.filter((x) => x > 0);
  const sandboxRss = pids.map((pid) => Number(execSync(`ps -o rss= -p ${pid}`).toString().trim()) / 1024);
  const apiGrowth = (process.memoryUsage.rss() - apiBefore) / 2 ** 20;

  // Noisy neighbours: one project runs an attack at its concurrency while another project's
  // function answers; the quiet project's p99 and the API process's RSS while it runs.
  const quiet = await load({ url, seconds: SECONDS, variants: calls.slice(0, 100), connections: 10 });
  const ATTACKS: Array<[string, string]> = [
    ['infinite loop', `export default () => { for (;;) {} }`],
    ['small-string memory bomb', `export default () => { const a = []; for (let n = 0; ; n++) a.push('x'.repeat(1024) + n); }`],
    ['typed-array memory bomb', `export default () => { const a = []; for (;;) a.push(new Uint8Array(512 * 1024)); }`],
    ['deep recursion', `export default () => { const f = (n) => f(n + 1) + 1; return f(0); }`],
    ['constructor chain', `export default () => [this?.constructor?.constructor, (async () => {}).constructor('return typeof process')()].map(String)`],
    ['fetch to loopback', `export default async () => { try { await fetch('http://127.0.0.1:5432/'); return 'reached'; } catch (e) { return e.code; } }`],
  ];
  const attackRows: string[] = [];
  // BENCH_ATTACKS=small,typed runs only the attacks whose names contain one of the words.
  const only = (process.env.BENCH_ATTACKS ?? '').split(',').filter(Boolean);
  for (const [what, source] of ATTACKS.filter(([w]) => only.length === 0 || only.some((o) => w.includes(o)))) {
    // The quiet project alone just before, so that a busy machine does not pass for the attack.
    const alone = await load({ url, seconds: SECONDS, variants: calls.slice(0, 100), connections: 10 });
    const noisy = await makeProject(ctx);
    await deployFunction(ctx, noisy.id, { name: 'attack', kind: 'http', source });
    const probe = await app.inject({ method: 'GET', url: '/api/functions/attack', headers: noisy.pk });
    let peakRss = process.memoryUsage.rss();
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 100);
    const noise = load({ url, seconds: SECONDS + 2, variants: [{ path: '/api/functions/attack', headers: noisy.pk }], connections: 20 });
    await new Promise((r) => setTimeout(r, 1000));
    const beside = await load({ url, seconds: SECONDS, variants: calls.slice(0, 100), connections: 10 });
    const n = await noise;
    clearInterval(sampler);
    const answer = probe.json() as { code?: string };
    attackRows.push(
      `| ${what} | ${probe.statusCode} ${answer.code ?? JSON.stringify(answer).slice(0, 40)} | ${n.rps.toFixed(1)} | ${alone.rps.toFixed(0)} req/s, p99 ${alone.p99} ms | ${beside.rps.toFixed(0)} req/s (${(beside.rps / alone.rps).toFixed(2)}×), p99 ${beside.p99} ms, errors ${beside.non2xx + beside.errors} | ${(peakRss / 2 ** 20).toFixed(0)} MB |`,
    );
  }

  console.log(`\n${DOCS} documents, 50 connections (10 for the neighbour runs), ${SECONDS} s per run, load from a separate process; ${ctx.config.functions.sandboxes} sandboxes, ${ctx.config.functions.projectConcurrency} per project\n`);
  console.log('| measure | value |');
  console.log('|---|---|');
  console.log(`| data API get by id | ${plainGet.rps.toFixed(0)} req/s, p50 / p99 ${plainGet.p50} / ${plainGet.p99} ms; CPU per request: ${plainGet.cpu} |`);
  console.log(
    `| HTTP function reading one document | ${viaFunction.rps.toFixed(0)} req/s, p50 / p99 ${viaFunction.p50} / ${viaFunction.p99} ms (${(viaFunction.rps / plainGet.rps).toFixed(2)}× the get, the median of ${ROUNDS} alternating rounds: ${eachRound}; errors ${viaFunction.non2xx + viaFunction.errors}); CPU per request: ${viaFunction.cpu} |`,
  );
  console.log(`| create, one at a time, p50 | ${plainCreate.toFixed(2)} ms without a hook, ${hookedCreate.toFixed(2)} ms with a before-hook (+${(hookedCreate - plainCreate).toFixed(2)} ms) |`);
  console.log(`| cold: first call on the node (sandbox start + unit) | ${coldNode.toFixed(0)} ms |`);
  console.log(`| cold: a new function's first call (unit only) | ${coldUnit.toFixed(0)} ms |`);
  console.log(`| memory with ${PROJECTS} projects' functions loaded | sandboxes ${sandboxRss.map((r) => r.toFixed(0)).join(' + ')} MB RSS; API process +${apiGrowth.toFixed(0)} MB |`);
  console.log(`\nA quiet project's function (10 connections) alone: ${quiet.rps.toFixed(0)} req/s, p99 ${quiet.p99} ms; API process RSS before the attacks ${(process.memoryUsage.rss() / 2 ** 20).toFixed(0)} MB. Beside another project attacking with 20 connections:\n`);
  console.log('| attack | its answer | attacks/s | the quiet project just before, alone | the quiet project meanwhile | API process peak RSS |');
  console.log('|---|---|--:|---|---|--:|');
  for (const r of attackRows) console.log(r);
});
