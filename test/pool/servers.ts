/**
 * Real database servers for the pooler and replica rig: Debian's PostgreSQL 15 (a primary with
 * wal_level=replica and a hot standby made from it with pg_basebackup, streaming) and Debian's
 * PgBouncer in `pool_mode = transaction` in front of the primary. Each runs as its own process
 * group on a free loopback port, as the `postgres` OS user when we are root (neither runs as
 * root). `stop()`/`start()` let a test take one away and bring it back.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../src/db/embedded.js';
import { postgresIds } from '../../src/db/embedded-access.js';

export const PG_BIN = '/usr/lib/postgresql/15/bin';
const PGBOUNCER = '/usr/sbin/pgbouncer';

/** Why the rig cannot run here (null when it can). */
export const poolRigSkipReason: string | null = !existsSync(PGBOUNCER)
  ? 'pgbouncer is not installed (apt-get install pgbouncer): the pooler and replica rig is skipped'
  : !existsSync(path.join(PG_BIN, 'pg_basebackup'))
    ? 'PostgreSQL 15 is not installed (apt-get install postgresql-15): the pooler and replica rig is skipped'
    : null;

export interface Server {
  name: string;
  port: number;
  /** A connection string to `database` on this server. */
  url(database?: string): string;
  start(): Promise<void>;
  /** Stops it: `fast` (SIGINT) by default, `kill` (SIGKILL) for a crash. */
  stop(how?: 'fast' | 'kill'): Promise<void>;
  readonly running: boolean;
  log: string[];
}

export interface Servers {
  primary: Server;
  standby: Server;
  pgbouncer: Server;
  /** Removes every directory (after stop). */
  stopAll(): Promise<void>;
}

const ids = postgresIds();

/** Hands a path to the `postgres` OS user when we are root (PostgreSQL's files must be its own). */
export function own(target: string): void {
  if (ids.uid !== undefined) chownSync(target, ids.uid, ids.gid!);
}

/** Runs a program as the `postgres` OS user when we are root (as ourselves otherwise); its stdout, or an error with all it said. */
export function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { ...ids, env: { LC_ALL: 'C', PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} failed (${r.status ?? r.signal ?? r.error?.message}): ${r.stdout}${r.stderr}`);
  return r.stdout;
}

async function waitAnswers(url: string, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return;
    } catch (err) {
      await c.end().catch(() => {});
      if (Date.now() > until) throw new Error(`${url} did not answer: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A server process (`cmd args`) on `port`, started and stopped as its own process group; ready once `ready` answers. */
export function server(name: string, port: number, cmd: string, args: string[], database: string, ready: string): Server {
  let child: ChildProcess | null = null;
  const log: string[] = [];
  const url = (db = database) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  const s: Server = {
    name,
    port,
    url,
    log,
    get running() {
      return child !== null;
    },
    async start() {
      if (child) return;
      const c = spawn(cmd, args, { ...ids, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { LC_ALL: 'C', PATH: process.env.PATH ?? '' } });
      for (const stream of [c.stdout, c.stderr]) stream?.on('data', (d: Buffer) => log.push(...d.toString().split('\n').filter(Boolean)));
      c.once('exit', () => {
        if (child === c) child = null;
      });
      child = c;
      await waitAnswers(url(ready)).catch((err: Error) => {
        throw new Error(`${name} did not start: ${err.message}\n${log.slice(-15).join('\n')}`);
      });
    },
    async stop(how = 'fast') {
      const c = child;
      if (!c) return;
      const exited = new Promise<void>((r) => c.once('exit', () => r()));
      try {
        process.kill(-c.pid!, how === 'kill' ? 'SIGKILL' : 'SIGINT');
      } catch {
        c.kill('SIGKILL');
      }
      const force = setTimeout(() => c.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(force);
      child = null;
    },
  };
  return s;
}

const PG_SETTINGS = [
  'listen_addresses=127.0.0.1',
  'wal_level=replica',
  'max_wal_senders=5',
  'hot_standby=on',
  'fsync=off',
  'full_page_writes=off',
  'shared_buffers=32MB',
  'max_connections=120',
  // A paused or slow standby must not cancel the rig's reads: conflicts are tested on purpose.
  'max_standby_streaming_delay=30s',
  'hot_standby_feedback=on',
];

/**
 * Starts a primary (database `plinth`, already created), its standby and PgBouncer in front
 * of the primary with `serverConnections` server connections for the pool. `settings`: more
 * PostgreSQL settings for both servers, after the rig's own (the last of a name wins), e.g. the
 * benchmark's `shared_preload_libraries=pg_stat_statements` and a higher `max_connections`.
 */
export async function startServers(opts: { serverConnections: number; settings?: string[] }): Promise<Servers> {
  if (poolRigSkipReason) throw new Error(poolRigSkipReason);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-pool-'));
  own(dir);
  const [pPort, sPort, bPort] = [await freePort(), await freePort(), await freePort()];
  const primaryDir = path.join(dir, 'primary');
  const standbyDir = path.join(dir, 'standby');
  run(path.join(PG_BIN, 'initdb'), ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const pgArgs = (data: string, port: number) => ['-D', data, '-p', String(port), '-k', dir, ...[...PG_SETTINGS, ...(opts.settings ?? [])].flatMap((o) => ['-c', o])];
  const primary = server('primary', pPort, path.join(PG_BIN, 'postgres'), pgArgs(primaryDir, pPort), 'plinth', 'postgres');
  await primary.start();
  const admin = new pg.Client({ connectionString: primary.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE plinth');
  await admin.end();

  run(path.join(PG_BIN, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(pPort), '-U', 'postgres', '-D', standbyDir, '-R', '-X', 'stream', '--no-sync']);
  const standby = server('standby', sPort, path.join(PG_BIN, 'postgres'), pgArgs(standbyDir, sPort), 'plinth', 'postgres');
  await standby.start();

  const ini = path.join(dir, 'pgbouncer.ini');
  const users = path.join(dir, 'userlist.txt');
  writeFileSync(users, '"postgres" ""\n');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=127.0.0.1 port=${pPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${bPort}`,
      `unix_socket_dir =`,
      'auth_type = trust',
      'admin_users = postgres',
      `auth_file = ${users}`,
      'pool_mode = transaction',
      `default_pool_size = ${opts.serverConnections}`,
      'min_pool_size = 0',
      'reserve_pool_size = 0',
      'max_client_conn = 2000',
      'max_db_connections = 0',
      'ignore_startup_parameters = extra_float_digits,options',
      'server_reset_query =',
      'logfile =',
      `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
  );
  for (const f of [ini, users]) own(f);
  const pgbouncer = server('pgbouncer', bPort, PGBOUNCER, [ini], 'plinth', 'plinth');
  await pgbouncer.start();

  return {
    primary,
    standby,
    pgbouncer,
    async stopAll() {
      await pgbouncer.stop().catch(() => {});
      await standby.stop().catch(() => {});
      await primary.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
