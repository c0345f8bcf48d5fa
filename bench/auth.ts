/**
 * End-user auth benchmark (`npx tsx bench/auth.ts`): boots its own embedded PostgreSQL and the
 * app in a temp dir, listens on 127.0.0.1, and measures with autocannon:
 *   - raw argon2id hash and verify rates (same parameters, same concurrency, same process),
 *   - sign-up and login throughput, as a share of those raw rates (target ≥ 80 %), in
 *     BENCH_ROUNDS rounds (3) that each measure the raw rate right before the server's; the
 *     median share is the result,
 *   - refresh-token rotation throughput (target ≥ 1 500 req/s).
 * Rate limits are off (RATE_LIMIT_SCALE=0) so the numbers measure the work, not the limiter.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import argon2 from 'argon2';
import { createRequire } from 'node:module';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { ARGON2_OPTIONS } from '../src/lib/passwords.js';
import { buildApp } from '../src/server.js';
import { makeCollection, makeProject, USERS_FIELDS } from '../test/helpers/fixtures.js';

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
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PASSWORD = 'bench password 1';

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

function run(opts: Opts): Promise<Result> {
  return new Promise((resolve, reject) => {
    autocannon({ duration: DURATION, ...opts }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** The server side: its own process (its own event loop), so the load generator does not share it. */
async function serve(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-auth-'));
  const booted = await boot(loadConfig({ ...process.env, PLINTH_DATA_DIR: dir, RATE_LIMIT_SCALE: '0', LOG_LEVEL: 'warn' }));
  const ctx = booted.ctx;
  ctx.mailer = { sendSystemMail: async () => {} }; // measure auth, not the mail pipeline
  const app = await buildApp(ctx);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const project = await makeProject(ctx);
  await makeCollection(ctx, project.id, 'users', USERS_FIELDS);
  process.send!({ base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, pk: project.publishableKey });
  process.once('message', async () => {
    await app.close();
    await booted.close();
    rmSync(dir, { recursive: true, force: true });
    process.send!('closed');
    process.exit(0);
  });
}

if (process.env.BENCH_AUTH_ROLE === 'server') {
  await serve();
} else {
const worker = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_AUTH_ROLE: 'server' } });
const { base, pk } = await new Promise<{ base: string; pk: string }>((resolve) => worker.once('message', resolve));
const project = { publishableKey: pk };
const json = { 'content-type': 'application/json', 'x-api-key': project.publishableKey };

const post = async (p: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(base + p, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) });
  return (await res.json()) as { data: { refreshToken: string } };
};

await post('/api/userAuth/signup', { email: 'bench@example.com', password: PASSWORD });
const hash = await argon2.hash(PASSWORD, ARGON2_OPTIONS);
const CONNS = 8;

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

// Each round measures the raw rate right before the server's, so a ratio compares two rates of
// the same minute; the machine's own drift (±15 % between minutes) would otherwise decide it.
interface Round { rawHash: number; signup: Result; rawVerify: number; login: Result }
const rounds: Round[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const rawHash = await rawRate(() => argon2.hash(PASSWORD, ARGON2_OPTIONS), CONNS, 5);
  const signup = await signupRun();
  const rawVerify = await rawRate(() => argon2.verify(hash, PASSWORD), CONNS, 5);
  const login = await loginRun();
  rounds.push({ rawHash, signup, rawVerify, login });
}
if (loginFailure) console.error('login failure sample:', loginFailure.slice(0, 300));

// Refresh: every response carries the rotated token, which goes back into the pool.
const pool: string[] = [];
for (let i = 0; i < 64; i++) pool.push((await post('/api/userAuth/login', { email: 'bench@example.com', password: PASSWORD }, { 'x-refresh-token-mode': 'header' })).data.refreshToken);
const refreshConns = 32;
const refresh = await run({
  url: base, connections: refreshConns,
  requests: [{
    method: 'POST', path: '/api/userAuth/refresh-token',
    setupRequest: (req) => ({ ...req, headers: { 'x-api-key': project.publishableKey, 'x-refresh-token': pool.shift() ?? '' } }),
    onResponse: (_status, body) => {
      try {
        const t = (JSON.parse(body) as { data?: { refreshToken?: string } }).data?.refreshToken;
        if (t) pool.push(t);
      } catch { /* counted as an error by autocannon */ }
    },
  }],
});

const share = (r: Result, raw: number) => r.requests.average / raw;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
const row = (name: string, r: Result, raw?: number) =>
  `| ${name} | ${r.connections} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx + r.errors} | ${raw ? raw.toFixed(1) : '–'} | ${raw ? pct(share(r, raw)) : '–'} |`;

console.log(`argon2id m=${ARGON2_OPTIONS.memoryCost} KiB, t=${ARGON2_OPTIONS.timeCost}, p=${ARGON2_OPTIONS.parallelism}; ${os.cpus().length} CPUs; UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 4}; ${ROUNDS} rounds\n`);
console.log('| scenario | conns | req/s | p50 ms | p99 ms | non-2xx+errors | raw argon2 ops/s | share of raw |');
console.log('|---|---|---|---|---|---|---|---|');
rounds.forEach((r, i) => {
  console.log(row(`round ${i + 1}: POST /signup`, r.signup, r.rawHash));
  console.log(row(`round ${i + 1}: POST /login`, r.login, r.rawVerify));
});
console.log(row('POST /refresh-token', refresh));
console.log(`\nmedian share of raw: sign-up ${pct(median(rounds.map((r) => share(r.signup, r.rawHash))))}, login ${pct(median(rounds.map((r) => share(r.login, r.rawVerify))))} (target ≥ 80 %)`);

worker.send('close');
await new Promise((resolve) => worker.once('message', resolve));
process.exit(0);
}
