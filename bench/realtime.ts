/**
 * Realtime benchmark (`npm run bench -- realtime`): boots its own embedded PostgreSQL and the
 * app, then measures (1) create throughput on a collection that streams its changes against
 * one that does not (50 connections, load from a separate process), (2) events per second
 * fanned out to 1 000 subscribers of one collection on one node (a burst of BENCH_BURST
 * documents), and (3) the time from a write's commit (its 201) to the event at a subscriber,
 * p50/p99, for writes paced 20 ms apart while those 1 000 listen.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCollection } from '../src/modules/collections/service.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';
import { load } from './lib/load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const WRITES = Number(process.env.BENCH_WRITES ?? 200);
/** Documents written at once (bulk calls of 100) for the fan-out rate. */
const BURST = Number(process.env.BENCH_BURST ?? 500);

const fields = [
  { key: 'title', type: 'String' },
  { key: 'n', type: 'Number' },
];

/** A raw SSE reader: counts change events and reports each event's arrival to `onEvent`. */
function listen(url: string, onEvent: (data: string) => void): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.includes('event: ready')) resolve(req);
          const data = /^id: .*\nevent: create\ndata: (.*)$/m.exec(block);
          if (data) onEvent(data[1]!);
        }
      });
    });
    req.on('error', reject);
  });
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

runBench('realtime', { PLINTH_RUN_WORKER: 'false', REALTIME_MAX_STREAMS_PER_PROJECT: String(SUBSCRIBERS + 10) }, async ({ app, ctx }) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const p = await makeProject(ctx);
  await createCollection(ctx, p.id, 'pro', { name: 'plain', fields });
  await createCollection(ctx, p.id, 'pro', { name: 'live', fields, realtime: true });
  const body = JSON.stringify({ title: 'x', n: 1 });

  const create = async (name: string, seconds = SECONDS) => load({ url, headers: p.sk, seconds, variants: [{ method: 'POST', path: `/api/data/${name}`, body }] });
  await create('plain', 2); // warm-up
  await create('live', 2);
  const plain = await create('plain');
  const live = await create('live');

  const ticket = await fetch(`${url}/api/realtime/ticket`, {
    method: 'POST',
    headers: { ...p.pk, 'content-type': 'application/json' },
    body: JSON.stringify({ subscriptions: [{ collection: 'live' }] }),
  }).then((r) => r.json() as Promise<{ data: { ticket: string } }>);
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  let received = 0;
  const streams: http.ClientRequest[] = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    streams.push(await listen(`${url}/api/realtime?ticket=${encodeURIComponent(ticket.data.ticket)}`, (data) => {
      received++;
      if (i !== 0) return;
      const title = (JSON.parse(data) as { document: { title: string } }).document.title;
      const t0 = sent.get(title);
      if (t0 !== undefined) latencies.push(performance.now() - t0);
    }));
  }
  const post = (path: string, payload: unknown) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { ...p.sk, 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  // (2) fan-out rate: a burst of documents, until every subscriber has every event
  const burstStart = performance.now();
  for (let k = 0; k < BURST; k += 100) {
    const docs = Array.from({ length: Math.min(100, BURST - k) }, (_, j) => ({ title: `b${k + j}`, n: k + j }));
    if ((await post('/api/data/live/bulk', docs)).status !== 201) throw new Error('bulk write failed');
  }
  const burstWant = BURST * SUBSCRIBERS;
  while (received < burstWant && performance.now() - burstStart < 120_000) await new Promise((r) => setTimeout(r, 10));
  const burstSeconds = (performance.now() - burstStart) / 1000;
  const burstReceived = received;
  // (3) latency: writes 20 ms apart, each timed from its answer (the commit) to the first subscriber's event
  received = 0;
  const started = performance.now();
  for (let k = 0; k < WRITES; k++) {
    const title = `w${k}`;
    const res = await post('/api/data/live', { title, n: k });
    sent.set(title, performance.now());
    if (res.status !== 201) throw new Error(`write answered ${res.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const want = WRITES * SUBSCRIBERS;
  while (received < want && performance.now() - started < 60_000) await new Promise((r) => setTimeout(r, 20));
  for (const s of streams) s.destroy();

  console.log(`\n${SECONDS} s per create run at 50 connections; ${SUBSCRIBERS} subscribers on one node, ${WRITES} writes\n`);
  console.log('| measure | result |');
  console.log('|---|--:|');
  console.log(`| create, collection without realtime | ${plain.rps.toFixed(0)} req/s (p99 ${plain.p99} ms) |`);
  console.log(`| create, collection with realtime (change rows written) | ${live.rps.toFixed(0)} req/s (p99 ${live.p99} ms), ${(live.rps / plain.rps).toFixed(2)}× |`);
  console.log(`| events delivered: ${BURST} changes to ${SUBSCRIBERS} subscribers | ${burstReceived} of ${burstWant} in ${burstSeconds.toFixed(1)} s: ${(burstReceived / burstSeconds).toFixed(0)} events/s |`);
  console.log(`| commit → event at a subscriber (among ${SUBSCRIBERS}), p50 / p99 | ${pct(latencies, 50).toFixed(0)} / ${pct(latencies, 99).toFixed(0)} ms |`);
  if (received < want || burstReceived < burstWant) process.exitCode = 1;
});
