/**
 * Webhooks benchmark (`npm run bench -- webhooks`): boots its own embedded PostgreSQL and the
 * app, then starts the job runner and the dispatcher as `npm start` does (src/main.ts) and, at
 * once, creates an endpoint (a receiver on 127.0.0.1) and writes documents one every
 * BENCH_WEBHOOK_PACE_MS for BENCH_WEBHOOK_SECONDS (past a whole minute, where a crontab job
 * would pause). Each write is timed from its commit (its 201) to the receiver's request:
 * the first one after the start on its own, then p50 / p99 / max over all.
 */
import type { AddressInfo } from 'node:net';
import { createCollection } from '../src/modules/collections/service.js';
import { startDispatcher } from '../src/modules/webhooks/dispatcher.js';
import { startWorker } from '../src/worker/runner.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { startReceiver } from '../test/modules/webhooks/receiver.js';
import { runBench } from './lib/bench-app.js';

const SECONDS = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 65);
const PACE_MS = Number(process.env.BENCH_WEBHOOK_PACE_MS ?? 100);
const TARGET_MS = 2000;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

// PLINTH_RUN_WORKER sizes the admin pool for the runner (boot.ts); the runner itself is started below
runBench('webhooks', { PLINTH_RUN_WORKER: 'true', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }, async ({ app, ctx }) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const p = await makeProject(ctx);
  await createCollection(ctx, p.id, 'pro', { name: 'orders', fields: [{ key: 'n', type: 'Number' }] });
  const rx = await startReceiver();
  const arrived = new Map<number, number>();
  rx.answer = (req) => {
    arrived.set((JSON.parse(req.body) as { data: { document: { n: number } } }).data.document.n, performance.now());
    return { status: 204 };
  };

  // the start, as src/main.ts does it, then at once an endpoint and the writes
  const startedAt = performance.now();
  const worker = await startWorker(ctx);
  const dispatcher = startDispatcher(ctx);
  const startMs = performance.now() - startedAt;
  const hook = await app.inject({ method: 'POST', url: `/api/projects/${p.id}/webhooks`, headers: p.owner.auth, payload: { url: `${rx.url}/hook` } });
  if (hook.statusCode !== 201) throw new Error(`endpoint answered ${hook.statusCode}`);

  const committed = new Map<number, number>();
  const end = performance.now() + SECONDS * 1000;
  for (let n = 0; performance.now() < end; n++) {
    const res = await fetch(`${url}/api/data/orders`, { method: 'POST', headers: { ...p.sk, 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
    committed.set(n, performance.now());
    if (res.status !== 201) throw new Error(`write answered ${res.status}`);
    await new Promise((r) => setTimeout(r, PACE_MS));
  }
  const waitUntil = performance.now() + 30_000;
  while (arrived.size < committed.size && performance.now() < waitUntil) await new Promise((r) => setTimeout(r, 20));
  await dispatcher.stop();
  await worker.stop();
  await rx.close();

  const latencies = [...committed].map(([n, t]) => (arrived.get(n) ?? Infinity) - t);
  const within = latencies.filter((l) => l <= TARGET_MS).length;
  console.log(`\nrunner + dispatcher started in ${startMs.toFixed(0)} ms; ${committed.size} writes ${PACE_MS} ms apart over ${SECONDS} s\n`);
  console.log('| measure | result |');
  console.log('|---|--:|');
  console.log(`| the first write after the start: commit → webhook received | ${latencies[0]!.toFixed(0)} ms |`);
  console.log(`| every write: commit → webhook received, p50 / p99 / max | ${pct(latencies, 50).toFixed(0)} / ${pct(latencies, 99).toFixed(0)} / ${Math.max(...latencies).toFixed(0)} ms |`);
  console.log(`| delivered within ${TARGET_MS} ms | ${within} of ${committed.size} |`);
  if (arrived.size < committed.size || pct(latencies, 99) > TARGET_MS) process.exitCode = 1;
});
