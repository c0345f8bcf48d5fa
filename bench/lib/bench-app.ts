/**
 * Boots Plinth for an in-process benchmark: its own data dir (embedded PostgreSQL) under the OS
 * temp dir, rate limits off, warn-level logs. `run` gives the app to `fn` and always shuts
 * everything down and removes the dir afterwards; a failure exits the process with 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { boot } from '../../src/boot.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { buildApp, type App } from '../../src/server.js';

export interface BenchApp {
  app: App;
  ctx: AppContext;
  config: Config;
  /** The embedded server's URL (or DATABASE_URL when one was given). */
  databaseUrl: string;
}

async function withBenchApp(name: string, env: Record<string, string>, fn: (b: BenchApp) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `plinth-bench-${name}-`));
  const config = loadConfig({ ...process.env, PLINTH_DATA_DIR: dir, RATE_LIMIT_SCALE: '0', LOG_LEVEL: 'warn', ...env });
  const booted = await boot(config);
  const app = await buildApp(booted.ctx);
  try {
    await fn({ app, ctx: booted.ctx, config, databaseUrl: booted.embedded?.url ?? config.databaseUrl! });
  } finally {
    await app.close();
    await booted.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a benchmark body as the process's main: exit code 1 (and the error) on failure. */
export function runBench(name: string, env: Record<string, string>, fn: (b: BenchApp) => Promise<void>): void {
  withBenchApp(name, env, fn).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
