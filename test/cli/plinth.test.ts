/**
 * The `plinth` command as a user runs it (`node bin/plinth.js ...`, the built bundle, no tsx):
 * --version, --help, an unknown command, `migrate` on a fresh database, then the API (`plinth`)
 * and a worker (`plinth worker`) on it, each stopped by SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onServer, serverUrl } from '../helpers/server-db.js';
import { ROOT_DIR } from '../../src/paths.js';

const BIN = path.join(ROOT_DIR, 'bin', 'plinth.js');
const NAME = `cli_${process.pid}_${Date.now().toString(36)}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-cli-'));
const children: ChildProcess[] = [];

interface Run {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function plinth(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT_DIR,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'development', LOG_FORMAT: 'json', PLINTH_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => (out += String(c)));
  child.stderr!.on('data', (c) => (err += String(c)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exited };
}

/** Resolves with the first JSON log line matching `test`, or rejects when the process exits first. */
function waitForLine(run: Run, test: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const check = () => {
      for (const text of run.out().split('\n')) {
        if (!text.startsWith('{')) continue;
        const line = JSON.parse(text) as Record<string, unknown>;
        if (test(line)) return resolve(line);
      }
    };
    run.child.stdout!.on('data', check);
    run.exited.then((code) => reject(new Error(`exited ${code} first:\n${run.out()}\n${run.err()}`)));
    check();
  });
}

beforeAll(() => onServer(`CREATE DATABASE ${NAME} TEMPLATE template0`));
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await onServer(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('plinth', () => {
  it('--version prints the package version', async () => {
    const run = plinth(['--version']);
    expect(await run.exited).toBe(0);
    expect(run.out().trim()).toBe(JSON.parse(readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')).version);
  });

  it('--help prints the usage with every command', async () => {
    const run = plinth(['--help']);
    expect(await run.exited).toBe(0);
    for (const word of ['Usage: plinth', 'start', 'worker', 'migrate', '--version']) expect(run.out()).toContain(word);
  });

  it('an unknown command prints the usage on stderr and exits 2', async () => {
    const run = plinth(['serve']);
    expect(await run.exited).toBe(2);
    expect(run.err()).toContain('unknown command "serve"');
    expect(run.err()).toContain('Usage: plinth');
    expect(run.out()).toBe('');
  });

  it('migrate applies every migration to a fresh database and exits 0', async () => {
    const run = plinth(['migrate'], { DATABASE_URL: serverUrl(NAME) });
    expect(await run.exited, run.err()).toBe(0);
    const client = new pg.Client({ connectionString: serverUrl(NAME) });
    await client.connect();
    try {
      const ours = await client.query('SELECT count(*)::int AS n FROM pgmigrations');
      expect(ours.rows[0].n).toBeGreaterThan(10);
      const jobs = await client.query(`SELECT to_regclass('graphile_worker.jobs') IS NOT NULL AS ok`);
      expect(jobs.rows[0].ok).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('with no command serves the API from the built bundle, prints the banner, and stops on SIGTERM', async () => {
    const run = plinth([], { DATABASE_URL: serverUrl(NAME), PORT: '0', HOST: '127.0.0.1', PLINTH_RUN_WORKER: 'false' });
    const banner = await waitForLine(run, (l) => l.msg === 'Plinth is listening');
    expect(banner).toMatchObject({ docs: expect.stringMatching(/\/docs$/), console: expect.stringMatching(/\/_\/$/), dataDir, database: expect.stringMatching(/^external PostgreSQL/) });
    expect(String(banner.database)).not.toContain('@'); // no credentials
    const health = await fetch(`${banner.url}/api/health`);
    expect(health.status).toBe(200);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('on SIGTERM readiness turns 503 first, while requests are still served (SHUTDOWN_DRAIN_MS), then exits 0', async () => {
    const run = plinth([], { DATABASE_URL: serverUrl(NAME), PORT: '0', HOST: '127.0.0.1', PLINTH_RUN_WORKER: 'false', SHUTDOWN_DRAIN_MS: '5000' });
    const { url } = await waitForLine(run, (l) => l.msg === 'Plinth is listening');
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    run.child.kill('SIGTERM');
    await waitForLine(run, (l) => l.msg === 'shutting down'); // logged in the same tick as draining starts
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'unavailable', reason: 'shutting_down' });
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    expect((await fetch(`${url}/api/health`)).status).toBe(200);
    expect(await run.exited).toBe(0);
  });

  it('worker runs jobs only and stops on SIGTERM', async () => {
    const run = plinth(['worker'], { DATABASE_URL: serverUrl(NAME) });
    await waitForLine(run, (l) => String(l.msg).startsWith('Plinth worker running'));
    expect(run.out()).not.toContain('Plinth is listening');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });
});
