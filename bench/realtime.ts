/**
 * Realtime benchmark (`npm run bench -- realtime`): boots its own embedded PostgreSQL and the
 * app, then measures (1) create throughput on a collection that streams its changes against
 * one that does not (50 connections, load from a separate process; BENCH_CREATE=0 skips it),
 * then, for each entry of BENCH_PROJECTS (`1`, or e.g. `1,100`: the subscribers spread evenly
 * over that many projects), with BENCH_SUBSCRIBERS streams held by separate load processes on
 * raw sockets (bench/lib/sse-load.ts):
 *   - the server's memory per idle stream (RSS and heap after a GC, before and after opening),
 *   - events per second fanned out: a burst of BENCH_BURST documents per project (bulk calls
 *     of 100), until every subscriber has every event,
 *   - the time from a write's commit (its 201) to the event at the subscribers, p50/p99 over
 *     every (subscriber, write) pair and at the first subscriber alone, for BENCH_WRITES writes
 *     paced 20 ms apart (round-robin over the projects),
 *   - the server process's CPU and RSS over those two phases, and the load average.
 */
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { AddressInfo } from 'node:net';
import { createCollection } from '../src/modules/collections/service.js';
import { makeProject, type TestProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';
import { load } from './lib/load.js';
import { processCpuUs } from './lib/proc-cpu.js';
import { SseLoad } from './lib/sse-load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const WRITES = Number(process.env.BENCH_WRITES ?? 200);
const PROJECTS = (process.env.BENCH_PROJECTS ?? '1').split(',').map(Number);
const CREATE = process.env.BENCH_CREATE !== '0';
/** Streams per load process. */
const PER_LOADER = Number(process.env.BENCH_STREAMS_PER_LOADER ?? 2500);

const fields = [
  { key: 'title', type: 'String' },
  { key: 'n', type: 'Number' },
];

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load1 = () => os.loadavg().map((l) => l.toFixed(2)).join(' / ');

async function memory() {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(100);
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers };
}

const rows: string[] = [];
const row = (measure: string, result: string) => rows.push(`| ${measure} | ${result} |`);

runBench('realtime', { PLINTH_RUN_WORKER: 'false', REALTIME_MAX_STREAMS_PER_PROJECT: String(SUBSCRIBERS + 10) }, async ({ app, ctx }) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  console.log(`load average at start (1 / 5 / 15 min): ${load1()}`);
  let failed = false;

  if (CREATE) {
    const p = await makeProject(ctx);
    await createCollection(ctx, p.id, 'pro', { name: 'plain', fields });
    await createCollection(ctx, p.id, 'pro', { name: 'live', fields, realtime: true });
    const body = JSON.stringify({ title: 'x', n: 1 });
    const create = async (name: string, seconds = SECONDS) => load({ url, headers: p.sk, seconds, variants: [{ method: 'POST', path: `/api/data/${name}`, body }] });
    await create('plain', 2); // warm-up
    await create('live', 2);
    const plain = await create('plain');
    const live = await create('live');
    row('create, collection without realtime', `${plain.rps.toFixed(0)} req/s (p99 ${plain.p99} ms)`);
    row('create, collection with realtime (change rows written)', `${live.rps.toFixed(0)} req/s (p99 ${live.p99} ms), ${(live.rps / plain.rps).toFixed(2)}×`);
  }

  for (const projectCount of PROJECTS) {
    const burst = Number(process.env.BENCH_BURST ?? (projectCount === 1 ? 500 : 100));
    const projects: TestProject[] = [];
    for (let i = 0; i < projectCount; i++) {
      const p = await makeProject(ctx);
      await createCollection(ctx, p.id, 'pro', { name: 'live', fields, realtime: true });
      projects.push(p);
    }
    const label = projectCount === 1 ? `${SUBSCRIBERS} subscribers of one project` : `${SUBSCRIBERS} subscribers over ${projectCount} projects`;
    const specs = Array.from({ length: SUBSCRIBERS }, (_, i) => {
      const p = projects[i % projectCount]!;
      return { project: p.id, apiKey: p.publishableKey };
    });

    const idle0 = await memory();
    const opening = performance.now();
    const streams = await SseLoad.open({ url, collection: 'live', specs, processes: Math.max(1, Math.ceil(SUBSCRIBERS / PER_LOADER)), writes: WRITES });
    const openSeconds = (performance.now() - opening) / 1000;
    await sleep(1000);
    const idle1 = await memory();
    const kb = (a: number, b: number) => ((b - a) / 1024 / SUBSCRIBERS).toFixed(1);
    row(`${label}: streams opened`, `${SUBSCRIBERS} in ${openSeconds.toFixed(1)} s`);
    row(`${label}: server memory per idle stream (RSS / JS heap / buffers)`, `${kb(idle0.rss, idle1.rss)} / ${kb(idle0.heap, idle1.heap)} / ${kb(idle0.external, idle1.external)} KB`);

    const post = (p: TestProject, path: string, payload: unknown) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { ...p.sk, 'content-type': 'application/json' }, body: JSON.stringify(payload) });

    // fan-out rate: a burst per project, four bulk calls in flight, until every subscriber has every event
    const cpu0 = processCpuUs(process.pid) ?? 0;
    const burstStart = performance.timeOrigin + performance.now();
    const bulks: Array<() => Promise<void>> = [];
    for (const p of projects) {
      for (let k = 0; k < burst; k += 100) {
        const docs = Array.from({ length: Math.min(100, burst - k) }, (_, j) => ({ title: `b${k + j}`, n: k + j }));
        bulks.push(async () => {
          if ((await post(p, '/api/data/live/bulk', docs)).status !== 201) throw new Error('bulk write failed');
        });
      }
    }
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (bulks.length) await bulks.shift()!();
    }));
    const writtenAt = performance.timeOrigin + performance.now();
    const burstWant = burst * SUBSCRIBERS;
    let st = await streams.status();
    let peakRss = process.memoryUsage().rss;
    while (st.burst < burstWant && performance.timeOrigin + performance.now() - burstStart < 180_000) {
      await sleep(50);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      st = await streams.status();
    }
    const burstSeconds = (st.lastBurstAt - burstStart) / 1000;
    const cpu1 = processCpuUs(process.pid) ?? 0;
    row(`${label}: ${burst} changes per project fanned out`, `${st.burst} of ${burstWant} events in ${burstSeconds.toFixed(1)} s (writes done at ${((writtenAt - burstStart) / 1000).toFixed(1)} s): ${(st.burst / burstSeconds).toFixed(0)} events/s; server CPU ${((cpu1 - cpu0) / 1e6).toFixed(1)} s, peak RSS ${(peakRss / 1048576).toFixed(0)} MB`);
    if (st.burst < burstWant) failed = true;

    // latency: writes 20 ms apart, round-robin over the projects, timed from the answer (the commit)
    const sent: Array<number | null> = Array.from({ length: WRITES }, () => null);
    // the server's side of it: when the feed's dispatch of the batch with write k returned (it
    // has handed the event to every socket; code that writes through res.write leaves the bytes
    // corked until the next tick), read by wrapping the node's feed for the run
    const dispatched: Array<number | null> = Array.from({ length: WRITES }, () => null);
    const feed = ctx.realtime.feed as unknown as { dispatch: (rows: Array<{ data: { title?: string } | null }>) => Promise<void> };
    const dispatch = feed.dispatch;
    feed.dispatch = async function (rows) {
      await dispatch.call(this, rows);
      const at = performance.timeOrigin + performance.now();
      for (const r of rows) {
        const t = r.data?.title;
        if (t?.startsWith('w')) dispatched[Number(t.slice(1))] ??= at;
      }
    };
    const cpu2 = processCpuUs(process.pid) ?? 0;
    const started = performance.now();
    for (let k = 0; k < WRITES; k++) {
      const res = await post(projects[k % projectCount]!, '/api/data/live', { title: `w${k}`, n: k });
      sent[k] = performance.timeOrigin + performance.now();
      if (res.status !== 201) throw new Error(`write answered ${res.status}`);
      await sleep(20);
    }
    const want = WRITES * (SUBSCRIBERS / projectCount);
    st = await streams.status();
    while (st.latency < want && performance.now() - started < 120_000) {
      await sleep(50);
      st = await streams.status();
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu3 = processCpuUs(process.pid) ?? 0;
    const lat = await streams.latencies(sent);
    feed.dispatch = dispatch;
    const server = dispatched.flatMap((d, k) => (d === null || sent[k] === null ? [] : [d - sent[k]!])).sort((a, b) => a - b);
    const sp = (q: number) => server[Math.min(server.length - 1, Math.floor((server.length * q) / 100))] ?? NaN;
    const rss = process.memoryUsage().rss;
    row(
      `${label}: commit → event, ${WRITES} writes 20 ms apart, p50 / p99 over every subscriber (at the first one; the feed's dispatch done)`,
      `${lat.all(50).toFixed(0)} / ${lat.all(99).toFixed(0)} ms (${lat.first(50).toFixed(0)} / ${lat.first(99).toFixed(0)} ms; dispatch done: ${sp(50).toFixed(0)} / ${sp(99).toFixed(0)} ms), ${st.latency} of ${want} events; server CPU ${(((cpu3 - cpu2) / 1e6 / seconds) * 100).toFixed(0)} % of a core, RSS ${(rss / 1048576).toFixed(0)} MB`,
    );
    if (st.latency < want || st.failures > 0) failed = true;
    if (st.failures > 0) row(`${label}: streams that failed or closed`, String(st.failures));
    await streams.close();
    await sleep(500);
  }

  console.log(`\n${CREATE ? `${SECONDS} s per create run at 50 connections; ` : ''}${SUBSCRIBERS} subscribers on one node, ${WRITES} writes; load average at the end (1 / 5 / 15 min): ${load1()}\n`);
  console.log('| measure | result |');
  console.log('|---|--:|');
  for (const r of rows) console.log(r);
  if (failed) process.exitCode = 1;
});
