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
import { mkdtempSync, rmSync } from 'node:fs';
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
import { describeFailure, freePort, spawnNode, until, waitApiReady, type Node } from './processes.js';

export { call, until, type Node, type Reply } from './processes.js';

export const PLATFORM_MAIL_KEY = 're_cluster_platform_key';
export const BUCKET = 'cluster-bucket';

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
  /** Starts API node `i` again (after it was killed) on its port; resolves once it is healthy. */
  restartApi(i: number): Promise<Node>;
  stop(): Promise<void>;
}

/** Why Redis-dependent assertions are skipped on this machine (null when they run). */
export const redisSkipReason = redisServerAvailable ? null : 'redis-server is not installed: the rig runs without Redis and skips the shared-limit and Redis-down checks (apt-get install redis-server)';

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

  const startApi = (i: number, port: number): Node => {
    const node = spawnNode(`api-${i + 1}`, 'api', { ...common, PLINTH_RUN_WORKER: 'false' }, port);
    nodes.push(node);
    rig.api[i] = node;
    return node;
  };

  let workerSeq = 0;
  const startWorker = async (): Promise<Node> => {
    const before = new Set((await heartbeats()).map((h) => h.process_id));
    const node = spawnNode(`worker-${++workerSeq}`, 'worker', common);
    nodes.push(node);
    const row = await until(`${node.name} to beat`, async () => {
      if (!node.alive()) throw new Error(`process exited before it was ready: ${describeFailure(node)}`);
      return (await heartbeats()).find((h) => !before.has(h.process_id) && h.worker_ids.length === Number(common.WORKER_CONCURRENCY));
    });
    node.workerIds = row.worker_ids;
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
    async restartApi(i) {
      const old = rig.api[i]!;
      await old.kill('SIGKILL');
      const node = startApi(i, Number(new URL(old.url).port));
      await waitApiReady(node);
      return node;
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
      startApi(i, await freePort());
    }
    await Promise.all(rig.api.map(waitApiReady));
    for (let i = 0; i < (opts.workers ?? 2); i++) await rig.startWorker();
  } catch (err) {
    await rig.stop();
    throw err;
  }
  return rig;
}

