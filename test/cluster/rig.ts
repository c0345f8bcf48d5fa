/**
 * The cluster rig: Plinth as it runs when scaled out, on one machine. Two API nodes
 * (`dist/main.js`, PLINTH_RUN_WORKER=false) and two workers (`dist/worker.js`), each its own OS
 * process (and process group) on a loopback port, on one PostgreSQL (this file's copy of the
 * suite's template, reached through a TCP proxy a test can cut), one Redis (a throwaway
 * `redis-server`, when installed), the S3 fake, the Resend fake and the OAuth fakes.
 *
 * The test process keeps an in-process context on the same database (direct, not through the
 * proxy) for fixtures and for checking what the database holds. Start the rig once per file
 * (beforeAll) and stop it in afterAll: `stop()` kills every child's process group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { inject } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { redisServerAvailable, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { FAKE_KEY, startFakeS3, type FakeS3 } from '../fakes/s3.js';
import { startFakeResend, type FakeResend } from '../fakes/resend.js';
import { startFakeGithub, type FakeGithub } from '../fakes/github.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const PLATFORM_MAIL_KEY = 're_cluster_platform_key';
export const BUCKET = 'cluster-bucket';

export interface Node {
  name: string;
  kind: 'api' | 'worker';
  /** http://127.0.0.1:port for an API node ('' for a worker). */
  url: string;
  child: ChildProcess;
  /** Every line the process wrote (stdout and stderr), for assertions and failure reports. */
  lines: string[];
  alive(): boolean;
  /** Signals the whole process group; resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface RigOptions {
  apiNodes?: number;
  workers?: number;
  /** Start Redis (when installed) and point the API nodes at it. */
  redis?: boolean;
  /** Extra environment for every process. */
  env?: Record<string, string>;
}

export interface Rig {
  env: TestEnv;
  api: Node[];
  workers: Node[];
  /** The proxy every process reaches PostgreSQL through: `cut()` is an outage for all of them. */
  pg: TcpProxy;
  redis: RedisServer | null;
  s3: FakeS3;
  resend: FakeResend;
  github: FakeGithub;
  /** Starts another worker process (e.g. after one was killed); resolves once it beats. */
  startWorker(): Promise<Node>;
  stop(): Promise<void>;
}

/** Why Redis-dependent assertions are skipped on this machine (null when they run). */
export const redisSkipReason = redisServerAvailable ? null : 'redis-server is not installed: the rig runs without Redis and skips the shared-limit and Redis-down checks (apt-get install redis-server)';

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Polls `probe` until it returns something truthy; the error names what was awaited. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, ms = 90_000, every = 100): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

const live = new Set<ChildProcess>();
// A test process that dies without its afterAll must not leave the cluster running.
process.once('exit', () => {
  for (const c of live) killGroup(c, 'SIGKILL');
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

function spawnNode(name: string, kind: Node['kind'], env: Record<string, string>, port?: number): Node {
  const entry = kind === 'api' ? 'dist/main.js' : 'dist/worker.js';
  const child = spawn(process.execPath, ['--enable-source-maps', entry], {
    cwd: ROOT,
    detached: true, // its own process group: kill(-pid) reaches anything it starts
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', ...env, ...(port ? { PORT: String(port) } : {}) },
  });
  live.add(child);
  const lines: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let rest = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts);
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => live.delete(child));
  const node: Node = {
    name,
    kind,
    url: port ? `http://127.0.0.1:${port}` : '',
    child,
    lines,
    alive: () => child.exitCode === null && child.signalCode === null,
    async kill(signal = 'SIGTERM') {
      if (!node.alive()) return;
      killGroup(child, signal);
      const force = setTimeout(() => killGroup(child, 'SIGKILL'), 15_000);
      await exited;
      clearTimeout(force);
    },
  };
  return node;
}

function describeFailure(node: Node): string {
  return `${node.name} (exit ${node.child.exitCode ?? node.child.signalCode}):\n${node.lines.slice(-30).join('\n')}`;
}

async function waitApiReady(node: Node): Promise<void> {
  await until(`${node.name} to answer /api/health`, async () => {
    if (!node.alive()) throw new Error(`process exited before it was ready: ${describeFailure(node)}`);
    const res = await fetch(`${node.url}/api/health`, { signal: AbortSignal.timeout(5000) });
    return res.status === 200;
  });
}

export async function startRig(opts: RigOptions = {}): Promise<Rig> {
  const template = new URL(inject('templateUrl'));
  const pg = await startTcpProxy(template.hostname, Number(template.port));
  const redis = opts.redis && redisServerAvailable ? await startRedisServer() : null;
  const s3 = await startFakeS3();
  await s3.createBucket(BUCKET);
  const resend = await startFakeResend();
  const github = await startFakeGithub();
  const env = await createTestEnv({ RESEND_API_KEY: PLATFORM_MAIL_KEY, RESEND_BASE_URL: resend.url });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-cluster-'));
  const nodes: Node[] = [];

  const common: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'info',
    PLINTH_DATA_DIR: dataDir,
    DATABASE_URL: pg.via(env.databaseUrl),
    DB_CONNECT_TIMEOUT_MS: '1000',
    ENCRYPTION_KEY: env.config.encryptionKey.toString('hex'),
    DASHBOARD_JWT_SECRET: env.config.dashboardJwtSecret.toString('hex'),
    RESEND_API_KEY: PLATFORM_MAIL_KEY,
    RESEND_BASE_URL: resend.url,
    MAIL_MONTHLY_LIMIT: '-1',
    STORAGE_DRIVER: 's3',
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.region,
    S3_BUCKET: BUCKET,
    S3_ACCESS_KEY_ID: FAKE_KEY.accessKeyId,
    S3_SECRET_ACCESS_KEY: FAKE_KEY.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
    GITHUB_BASE_URL: github.url,
    GITHUB_API_BASE_URL: github.url,
    WORKER_CONCURRENCY: '4',
    WORKER_DEAD_AFTER_MS: '2000',
    REDIS_COMMAND_TIMEOUT_MS: '300',
    DASHBOARD: 'false',
    // One public address for every node, as behind a load balancer (OAuth redirect URIs must match).
    PUBLIC_URL: 'http://localhost:8080',
    ...(redis ? { REDIS_URL: redis.url } : {}),
    ...opts.env,
  };

  const heartbeats = async () =>
    (await sql<{ process_id: string; worker_ids: string[] }>`SELECT process_id, worker_ids FROM worker_heartbeats`.execute(env.ctx.db.admin)).rows;

  let workerSeq = 0;
  const startWorker = async (): Promise<Node> => {
    const before = new Set((await heartbeats()).map((h) => h.process_id));
    const node = spawnNode(`worker-${++workerSeq}`, 'worker', common);
    nodes.push(node);
    await until(`${node.name} to beat`, async () => {
      if (!node.alive()) throw new Error(`process exited before it was ready: ${describeFailure(node)}`);
      return (await heartbeats()).some((h) => !before.has(h.process_id) && h.worker_ids.length === Number(common.WORKER_CONCURRENCY));
    });
    return node;
  };

  const rig: Rig = {
    env,
    api: [],
    workers: [],
    pg,
    redis,
    s3,
    resend,
    github,
    startWorker: async () => {
      const w = await startWorker();
      rig.workers.push(w);
      return w;
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
      await env.close().catch(() => {});
      await pg.close();
      await redis?.stop();
      await s3.close().catch(() => {});
      await resend.close().catch(() => {});
      await github.close().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  };

  try {
    // API nodes boot in parallel (their migration check takes the same advisory lock); then the
    // workers, one at a time, so each heartbeat is told apart.
    for (let i = 0; i < (opts.apiNodes ?? 2); i++) {
      const port = await freePort();
      const node = spawnNode(`api-${i + 1}`, 'api', { ...common, PLINTH_RUN_WORKER: 'false' }, port);
      nodes.push(node);
      rig.api.push(node);
    }
    await Promise.all(rig.api.map(waitApiReady));
    for (let i = 0; i < (opts.workers ?? 2); i++) await rig.startWorker();
  } catch (err) {
    await rig.stop();
    throw err;
  }
  return rig;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: string;
  json(): any; // eslint-disable-line @typescript-eslint/no-explicit-any
  cookies: Record<string, string>;
}

/** One HTTP call to a node, the way a client would make it (JSON body, no redirects followed). */
export async function call(
  node: Node | string,
  method: string,
  url: string,
  opts: { headers?: Record<string, string>; body?: unknown; cookies?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Reply> {
  const base = typeof node === 'string' ? node : node.url;
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.cookies) headers.cookie = Object.entries(opts.cookies).map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(base + url, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    redirect: 'manual',
    signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000),
  });
  const body = await res.text();
  const cookies: Record<string, string> = {};
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair!.indexOf('=');
    cookies[pair!.slice(0, i).trim()] = pair!.slice(i + 1);
  }
  return { status: res.status, headers: res.headers, body, json: () => JSON.parse(body), cookies };
}
