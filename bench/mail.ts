/**
 * Mail benchmark (`npx tsx bench/mail.ts`): a fake Resend on 127.0.0.1 answering after 20 ms
 * (this process), and the app on its own embedded PostgreSQL in a child process (so the load
 * generator does not share its event loop). Measures:
 *   1. POST /api/mail/send throughput with autocannon (target ≥ 1 000 req/s): each request
 *      writes the MailLog, the job and the quota slot in one transaction; the worker is off.
 *   2. The time the in-process worker (WORKER_CONCURRENCY, default 64 here) takes to drain
 *      10 000 queued mails against the 20 ms fake (target < 30 s).
 * Rate limits are off (RATE_LIMIT_SCALE=0) and the quota unlimited (MAIL_MONTHLY_LIMIT=-1).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { sendMail } from '../src/modules/mail/send.js';
import { buildApp } from '../src/server.js';
import { startWorker } from '../src/worker/runner.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { startFakeResend } from '../test/fakes/resend.js';

interface Result {
  connections: number;
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (opts: object, cb: (err: Error | null, res: Result) => void) => unknown;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const DRAIN = Number(process.env.BENCH_DRAIN ?? 10_000);
const CONCURRENCY = process.env.WORKER_CONCURRENCY ?? '64';

async function serve(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-mail-'));
  const config = loadConfig({
    ...process.env, PLINTH_DATA_DIR: dir, RATE_LIMIT_SCALE: '0', LOG_LEVEL: 'warn', MAIL_MONTHLY_LIMIT: '-1',
    RESEND_API_KEY: 're_bench', RESEND_BASE_URL: process.env.BENCH_RESEND_URL, WORKER_CONCURRENCY: CONCURRENCY,
  });
  const booted = await boot(config);
  const { ctx } = booted;
  const app = await buildApp(ctx);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const project = await makeProject(ctx);
  process.send!({ base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, sk: project.secretKey });
  const queued = async () =>
    (await sql<{ n: number }>`SELECT count(*)::int AS n FROM mail_logs WHERE status = 'queued'`.execute(ctx.db.admin)).rows[0]!.n;

  process.once('message', async () => {
    // Start the drain from exactly DRAIN queued mails: drop phase 1's, queue DRAIN afresh.
    await sql`DELETE FROM graphile_worker._private_jobs`.execute(ctx.db.admin);
    await sql`DELETE FROM mail_logs`.execute(ctx.db.admin);
    const record = (await ctx.projects.byId(project.id))!;
    let waiting = await queued();
    while (waiting < DRAIN) {
      await Promise.all(Array.from({ length: Math.min(50, DRAIN - waiting) }, () => sendMail(ctx, record, { to: 'fill@example.com', subject: 'fill', text: 't' })));
      waiting = await queued();
    }
    const start = Date.now();
    const worker = await startWorker(ctx, { pollInterval: 200 });
    while ((await queued()) > 0) await new Promise((r) => setTimeout(r, 100));
    const seconds = (Date.now() - start) / 1000;
    const failed = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM mail_logs WHERE status = 'failed'`.execute(ctx.db.admin)).rows[0]!.n;
    await worker.stop();
    await app.close();
    await booted.close();
    rmSync(dir, { recursive: true, force: true });
    process.send!({ drained: waiting, seconds, failed });
    process.exit(0);
  });
}

if (process.env.BENCH_MAIL_ROLE === 'server') {
  await serve();
} else {
  const fake = await startFakeResend();
  fake.latencyMs = 20;
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_MAIL_ROLE: 'server', BENCH_RESEND_URL: fake.url },
  });
  const { base, sk } = await new Promise<{ base: string; sk: string }>((resolve) => child.once('message', resolve));
  const send = await new Promise<Result>((resolve, reject) => {
    autocannon({
      url: base, connections: 64, duration: DURATION,
      requests: [{
        method: 'POST', path: '/api/mail/send',
        headers: { 'content-type': 'application/json', 'x-api-key': sk },
        body: JSON.stringify({ to: 'bench@example.com', subject: 'Bench', html: '<p>Hello</p>' }),
      }],
    }, (err, res) => (err ? reject(err) : resolve(res)));
  });
  child.send('drain');
  const drain = await new Promise<{ drained: number; seconds: number; failed: number }>((resolve) => child.once('message', resolve));
  const providerCalls = fake.requests.filter((r) => r.path === '/emails').length;
  await fake.close();

  const rate = drain.drained / drain.seconds;
  console.log(`${os.cpus().length} CPUs; fake Resend latency ${fake.latencyMs} ms; WORKER_CONCURRENCY=${CONCURRENCY}\n`);
  console.log('| scenario | result | target | p50 / p99 ms | errors |');
  console.log('|---|---|---|---|---|');
  console.log(`| POST /api/mail/send (64 conns, ${DURATION} s) | ${send.requests.average.toFixed(0)} req/s (${send.requests.total} queued) | ≥ 1 000 req/s | ${send.latency.p50} / ${send.latency.p99} | ${send.non2xx + send.errors} |`);
  console.log(`| worker drains ${drain.drained} queued mails | ${drain.seconds.toFixed(1)} s (${rate.toFixed(0)} mails/s, ${providerCalls} provider calls) | < 30 s | – | ${drain.failed} failed |`);
  process.exit(0);
}
