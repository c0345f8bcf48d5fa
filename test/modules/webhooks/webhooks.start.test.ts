/**
 * The first webhook after a start: a `plinth worker` process (src/worker/main.ts) is spawned on
 * this file's database, and as soon as it says it runs, an endpoint is created and a document
 * written. Its delivery must reach the receiver within 2 s of the write's commit (its 201), not
 * wait for the next whole minute, when a crontab job would first dispatch.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api } from '../data/helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

let env: TestEnv;
let p: TestProject;
let rx: Receiver;
let dataDir: string;
let worker: ChildProcess | undefined;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  rx = await startReceiver();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-webhook-start-'));
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: p.owner.auth, payload: { name: 'orders', schema: [{ key: 'total', type: 'Number' }] } });
  expect(res.statusCode).toBe(201);
});
afterAll(async () => {
  if (worker && worker.exitCode === null && worker.signalCode === null) {
    worker.kill('SIGTERM');
    await new Promise((r) => worker!.once('exit', r));
  }
  await rx.close();
  await env.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Spawns `plinth worker` and resolves when it announces that it runs. */
function startWorkerProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker/main.ts'], {
    cwd: path.resolve(import.meta.dirname, '../../..'),
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      PLINTH_DATA_DIR: dataDir,
      DATABASE_URL: env.databaseUrl,
      ENCRYPTION_KEY: env.config.encryptionKey.toString('hex'),
      DASHBOARD_JWT_SECRET: env.config.dashboardJwtSecret.toString('hex'),
      WORKER_CONCURRENCY: '2',
    },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('Plinth worker running')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`the worker exited (${code}) before it ran`)));
  });
}

describe('a webhook right after a worker starts', () => {
  it('is delivered within 2 s of the commit, not at the next whole minute', async () => {
    worker = await startWorkerProcess();
    const created = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/webhooks`, headers: p.owner.auth, payload: { url: `${rx.url}/hook` } });
    expect(created.statusCode).toBe(201);
    const write = await api(env).post('/api/data/orders', p.sk, { total: 42 });
    expect(write.status).toBe(201);
    const committed = Date.now();
    while (rx.received.length === 0 && Date.now() - committed < 5000) await new Promise((r) => setTimeout(r, 10));
    const latency = Date.now() - committed;
    expect(rx.received.map((r) => JSON.parse(r.body).data.document.total)).toEqual([42]);
    expect(latency).toBeLessThan(2000);
  });
});
