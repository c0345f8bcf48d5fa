/**
 * Per-test-file environment: a fresh database copied from the migrated template, a booted
 * AppContext on it (fake clock, captured logs) and the Fastify app. Call `close()` in afterAll.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { inject } from 'vitest';
import { boot } from '../../src/boot.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { FakeClock } from '../../src/lib/clock.js';
import { buildApp, type App } from '../../src/server.js';

export interface TestEnv {
  app: App;
  ctx: AppContext;
  config: Config;
  clock: FakeClock;
  databaseUrl: string;
  /** Every log line written so far (JSON strings): for "never logged" assertions. */
  logs: string[];
  close(): Promise<void>;
}

let counter = 0;

async function cloneTemplate(): Promise<string> {
  const template = new URL(inject('templateUrl'));
  const name = `t_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const admin = new URL(template);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${pg.escapeIdentifier(template.pathname.slice(1))}`);
        break;
      } catch (err) {
        // Two files cloning the template at the same instant: retry shortly.
        if (attempt > 20) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await client.end();
  }
  template.pathname = '/' + name;
  return template.toString();
}

export interface TestEnvOptions {
  /** Rewrites the database URL the app connects to (e.g. through a TCP proxy a test can cut). */
  route?: (databaseUrl: string) => string;
  /**
   * The tenant pool as behind a transaction pooler (docs/scaling.md): DATABASE_URL is another
   * address of the same database (`application_name=plinth-pooled`), DATABASE_DIRECT_URL the
   * database itself, so the request statements run unnamed, each carrying its scope.
   */
  pooled?: boolean;
}

export async function createTestEnv(env: Record<string, string> = {}, opts: TestEnvOptions = {}): Promise<TestEnv> {
  const databaseUrl = await cloneTemplate();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-env-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    PLINTH_DATA_DIR: dataDir,
    DATABASE_URL: opts.route ? opts.route(databaseUrl) : databaseUrl,
    ...(opts.pooled ? { DATABASE_URL: `${databaseUrl}${databaseUrl.includes('?') ? '&' : '?'}application_name=plinth-pooled`, DATABASE_DIRECT_URL: databaseUrl } : {}),
    ...env,
  });
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const clock = new FakeClock(new Date());
  const booted = await boot(config, { clock, logStream, skipMigrations: true });
  const app = await buildApp(booted.ctx);
  return {
    app,
    ctx: booted.ctx,
    config,
    clock,
    databaseUrl,
    logs,
    async close() {
      await app.close();
      await booted.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
