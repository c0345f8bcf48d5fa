/**
 * End-user auth benchmark (`npx tsx bench/auth.ts`): boots its own embedded PostgreSQL and the
 * app in a child process (its own event loop), listens on 127.0.0.1, and measures with
 * autocannon, after BENCH_WARMUP seconds (3) of sign-ups and logins:
 *   - raw argon2id hash and verify rates (same parameters, same concurrency), measured in the
 *     server's own process, so on the same CPUs as the server,
 *   - sign-up and login throughput, as a share of those raw rates (target ≥ 80 %), in
 *     BENCH_ROUNDS rounds (3) that each measure the raw rate right before the server's; the
 *     median share is the result. Sign-up twice per round: with the verification mail queued
 *     and delivered to the dev outbox by the in-process job worker (as `npm start` runs it:
 *     what a user gets), and with the mailer stubbed (auth alone),
 *   - where each request's CPU goes: the server's main thread, its other threads (argon2 on the
 *     thread pool), PostgreSQL and the load generator (ms per request, from /proc),
 *   - refresh-token rotation throughput (target ≥ 1 500 req/s).
 * BENCH_AUTH_CPU=1 pins the server to that CPU and the load generator to CPU 0, as the shared
 * suite does (`../shared/bench`): the raw rate is then one core's. Rate limits are off
 * (RATE_LIMIT_SCALE=0) so the numbers measure the work, not the limiter.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import argon2 from 'argon2';
import { createRequire } from 'node:module';
import { sql } from 'kysely';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import type { Mailer } from '../src/context.js';
import { ARGON2_OPTIONS } from '../src/lib/passwords.js';
import { buildApp } from '../src/server.js';
import { startWorker } from '../src/worker/runner.js';
import { makeCollection, makeProject, USERS_FIELDS } from '../test/helpers/fixtures.js';
import { pin } from './lib/pin.js';
import { clusterCpuUs, processCpuUs } from './lib/proc-cpu.js';

interface Result {
  connections: number;
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
interface Req { method?: string; path?: string; body?: string; headers?: Record<string, string> }
interface Opts {
  url: string;
  connections: number;
  duration?: number;
  requests: Array<Req & {
    setupRequest?: (req: Req) => Req;
    onResponse?: (status: number, body: string) => void;
  }>;
}
type Autocannon = (opts: Opts, cb: (err: Error | null, res: Result) => void) => unknown;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const DURATION = Number(process.env.BENCH_SECONDS ?? 6);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SERVER_CPU = process.env.BENCH_AUTH_CPU === undefined ? undefined : Number(process.env.BENCH_AUTH_CPU);
const PASSWORD = 'bench password 1';
const CONNS = 8;

/** Messages between the load generator (parent) and the server (child). */
type ToServer =
  | { kind: 'raw'; op: 'hash' | 'verify'; seconds: number }
  | { kind: 'mail'; real: boolean }
  | { kind: 'queued' }
  | { kind: 'close' };

async function rawRate(op: () => Promise<unknown>, concurrency: number, seconds: number): Promise<number> {
  let done = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < until) {
      await op();
      done++;
    }
  }));
  return done / seconds;
}

/** The server side: boots the app, then answers the parent's messages. */
async function serve(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-auth-'));
  const booted = await boot(loadConfig({ ...process.env, PLINTH_DATA_DIR: dir, RATE_LIMIT_SCALE: '0', LOG_LEVEL: 'warn' }));
  const ctx = booted.ctx;
  const realMailer = ctx.mailer;
  const stubMailer: Mailer = { sendSystemMail: async () => {} };
  const app = await buildApp(ctx);
  const worker = await startWorker(ctx); // as `npm start` runs it: the outbox gets the mail
  await app.listen({ port: 0, host: '127.0.0.1' });
  const project = await makeProject(ctx);
  await makeCollection(ctx, project.id, 'users', USERS_FIELDS);
  const hash = await argon2.hash(PASSWORD, ARGON2_OPTIONS);
  const reply = (m: unknown) => process.send!(m);
  process.on('message', async (m: ToServer) => {
    if (m.kind === 'raw') {
      const op = m.op === 'hash' ? () => argon2.hash(PASSWORD, ARGON2_OPTIONS) : () => argon2.verify(hash, PASSWORD);
      reply({ rate: await rawRate(op, CONNS, m.seconds) });
    } else if (m.kind === 'mail') {
      ctx.mailer = m.real ? realMailer : stubMailer;
      reply({ ok: true });
    } else if (m.kind === 'queued') {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM mail_logs WHERE status = 'queued'`.execute(ctx.db.admin);
      reply({ queued: rows[0]!.n });
    } else {
      await app.close();
      await worker.stop();
      await booted.close();
      rmSync(dir, { recursive: true, force: true });
      reply('closed');
      process.exit(0);
    }
  });
  reply({ base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, pk: project.publishableKey, clusterDir: path.join(ctx.config.dataDir, 'pg') });
}

if (process.env.BENCH_AUTH_ROLE === 'server') {
  await serve();
} else {
  await main();
}

function run(opts: Opts): Promise<Result> {
  return new Promise((resolve, reject) => {
    autocannon({ duration: DURATION, ...opts }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** CPU time (µs) of the server's main thread and of its other threads, from /proc/<pid>/task. */
function serverThreadsUs(pid: number): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const us = threadCpuUs(pid, tid);
    if (Number(tid) === pid) main += us;
    else others += us;
  }
  return { main, others };
}

function threadCpuUs(pid: number, tid: string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000;
  } catch {
    return 0; // a thread that ended between the listing and the read
  }
}

interface CpuSplit { main: number; pool: number; pg: number; load: number }

async function main(): Promise<void> {
  const worker = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_AUTH_ROLE: 'server' } });
  const ask = <T>(m: ToServer) => new Promise<T>((resolve) => {
    worker.once('message', (r) => resolve(r as T));
    worker.send(m);
  });
  const { base, pk, clusterDir } = await new Promise<{ base: string; pk: string; clusterDir: string }>((resolve) => worker.once('message', resolve));
  if (SERVER_CPU !== undefined) {
    pin(worker.pid!, SERVER_CPU);
    pin(process.pid, 0);
  }
  const json = { 'content-type': 'application/json', 'x-api-key': pk };
  const post = async (p: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(base + p, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) });
    return (await res.json()) as { data: { refreshToken: string } };
  };
  await post('/api/userAuth/signup', { email: 'bench@example.com', password: PASSWORD });

  let seq = 0;
  const signupRun = () => run({
    url: base, connections: CONNS,
    requests: [{
      method: 'POST', path: '/api/userAuth/signup', headers: json,
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `b${seq++}@example.com`, password: PASSWORD }) }),
    }],
  });
  let loginFailure = '';
  const loginRun = () => run({
    url: base, connections: CONNS,
    requests: [{
      method: 'POST', path: '/api/userAuth/login', headers: json,
      body: JSON.stringify({ email: 'bench@example.com', password: PASSWORD }),
      onResponse: (status, body) => {
        if (status !== 200 && !loginFailure) loginFailure = `${status} ${body}`;
      },
    }],
  });

  /** Runs `scenario` and splits the CPU it cost per request (ms). */
  async function measured(scenario: () => Promise<Result>): Promise<{ r: Result; cpu: CpuSplit }> {
    const at = () => ({ t: serverThreadsUs(worker.pid!), pg: clusterCpuUs(clusterDir) ?? 0, load: processCpuUs(process.pid) ?? 0 });
    const a = at();
    const r = await scenario();
    const b = at();
    const per = (x: number, y: number) => (y - x) / 1000 / Math.max(1, r.requests.average * DURATION);
    return { r, cpu: { main: per(a.t.main, b.t.main), pool: per(a.t.others, b.t.others), pg: per(a.pg, b.pg), load: per(a.load, b.load) } };
  }

  const raw = async (op: 'hash' | 'verify') => (await ask<{ rate: number }>({ kind: 'raw', op, seconds: 5 })).rate;
  const mail = (real: boolean) => ask({ kind: 'mail', real });

  if (WARMUP > 0) {
    await mail(true);
    await run({ url: base, connections: CONNS, duration: WARMUP, requests: [{ method: 'POST', path: '/api/userAuth/signup', headers: json, setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `w${seq++}@example.com`, password: PASSWORD }) }) }] });
    await run({ url: base, connections: CONNS, duration: WARMUP, requests: [{ method: 'POST', path: '/api/userAuth/login', headers: json, body: JSON.stringify({ email: 'bench@example.com', password: PASSWORD }) }] });
  }

  // Each round measures the raw rate right before the server's, so a ratio compares two rates of
  // the same minute; the machine's own drift (±15 % between minutes) would otherwise decide it.
  type Measured = Awaited<ReturnType<typeof measured>>;
  interface Round { rawHash: number; signupMail: Measured; mailBacklog: number; signupStub: Measured; rawVerify: number; login: Measured }
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const rawHash = await raw('hash');
    await mail(true);
    const signupMail = await measured(signupRun);
    const mailBacklog = (await ask<{ queued: number }>({ kind: 'queued' })).queued;
    await mail(false);
    const signupStub = await measured(signupRun);
    await mail(true);
    const rawVerify = await raw('verify');
    const login = await measured(loginRun);
    rounds.push({ rawHash, signupMail, mailBacklog, signupStub, rawVerify, login });
  }
  if (loginFailure) console.error('login failure sample:', loginFailure.slice(0, 300));

  // Refresh: every response carries the rotated token, which goes back into the pool.
  const pool: string[] = [];
  for (let i = 0; i < 64; i++) pool.push((await post('/api/userAuth/login', { email: 'bench@example.com', password: PASSWORD }, { 'x-refresh-token-mode': 'header' })).data.refreshToken);
  const refresh = await run({
    url: base, connections: 32,
    requests: [{
      method: 'POST', path: '/api/userAuth/refresh-token',
      setupRequest: (req) => ({ ...req, headers: { 'x-api-key': pk, 'x-refresh-token': pool.shift() ?? '' } }),
      onResponse: (_status, body) => {
        try {
          const t = (JSON.parse(body) as { data?: { refreshToken?: string } }).data?.refreshToken;
          if (t) pool.push(t);
        } catch { /* counted as an error by autocannon */ }
      },
    }],
  });

  const share = (r: Result, rawRateValue: number) => r.requests.average / rawRateValue;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
  const ms = (x: number) => x.toFixed(2);
  const row = (name: string, m: { r: Result; cpu?: CpuSplit }, rawRateValue?: number) => {
    const { r, cpu } = m;
    const split = cpu ? `${ms(cpu.main)} | ${ms(cpu.pool)} | ${ms(cpu.pg)} | ${ms(cpu.load)}` : '– | – | – | –';
    return `| ${name} | ${r.connections} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx + r.errors} | ${rawRateValue ? rawRateValue.toFixed(1) : '–'} | ${rawRateValue ? pct(share(r, rawRateValue)) : '–'} | ${split} |`;
  };

  const where = SERVER_CPU === undefined ? `all ${os.availableParallelism()} CPUs shared by server, PostgreSQL and load` : `server pinned to CPU ${SERVER_CPU}, load to CPU 0, PostgreSQL unpinned`;
  console.log(`argon2id m=${ARGON2_OPTIONS.memoryCost} KiB, t=${ARGON2_OPTIONS.timeCost}, p=${ARGON2_OPTIONS.parallelism}; ${where}; UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 4}; ${WARMUP} s warm-up, ${ROUNDS} rounds of ${DURATION} s\n`);
  console.log('| scenario | conns | req/s | p50 ms | p99 ms | non-2xx+errors | raw argon2 ops/s | share of raw | CPU ms/req: main thread | other threads | PostgreSQL | load |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  rounds.forEach((r, i) => {
    console.log(row(`round ${i + 1}: POST /signup (mail queued, delivered to the outbox)`, r.signupMail, r.rawHash));
    console.log(row(`round ${i + 1}: POST /signup (mailer stubbed)`, r.signupStub, r.rawHash));
    console.log(row(`round ${i + 1}: POST /login`, r.login, r.rawVerify));
  });
  console.log(row('POST /refresh-token', { r: refresh }));
  const med = (pick: (r: Round) => number) => pct(median(rounds.map(pick)));
  console.log(`\nmail still queued right after each sign-up run: ${rounds.map((r) => r.mailBacklog).join(', ')}`);
  console.log(`median share of raw (target ≥ 80 %): sign-up with its mail ${med((r) => share(r.signupMail.r, r.rawHash))}, sign-up with the mailer stubbed ${med((r) => share(r.signupStub.r, r.rawHash))}, login ${med((r) => share(r.login.r, r.rawVerify))}`);

  await ask({ kind: 'close' });
  process.exit(0);
}
