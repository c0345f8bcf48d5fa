/**
 * Whole-server point-in-time recovery on the real programs (docs/deploy.md, "Point-in-time
 * recovery with pgBackRest"): Debian's PostgreSQL 15 archives its WAL through Debian's
 * pgBackRest into a repository in a temp dir (`archive_command = 'pgbackrest … archive-push
 * %p'`), a full backup is taken, and a Plinth API node (the built bundle, as in production)
 * migrates the database, then, through its HTTP API, an operator registers, creates a project
 * and a collection and writes document A. With the node stopped, every table's contents are
 * fingerprinted and a restore point is created (the time is noted too); then another node writes
 * document B and creates a second collection, `pgbackrest check` switches the WAL and waits for
 * it to be archived, and the server is stopped. Each test follows the runbook's restore: the data
 * directory moved aside, `pgbackrest restore` into an empty one, the server started on it: to
 * the named restore point, to the noted time, and (the control: the archive really holds B) to
 * the end of the archive; every table is compared with the fingerprint, then Plinth boots on
 * it, `plinth migrate --status` says it is in sync, and the API shows A and not B.
 *
 * Skipped with a message where pgbackrest or PostgreSQL 15 is not installed (CI installs both,
 * and sets PLINTH_REQUIRE_PITR_RIG=1 so a missing one fails instead). As root, PostgreSQL and
 * pgBackRest run as the `postgres` OS user, which owns the temp dir (test/pool/servers.ts).
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/paths.js';
import { call, describeFailure, freePort, spawnNode, until, waitApiReady, type Node } from '../cluster/processes.js';
import { own, PG_BIN, run, server, type Server } from '../pool/servers.js';

const PGBACKREST = '/usr/bin/pgbackrest';

const skipReason: string | null = !existsSync(PGBACKREST)
  ? 'pgbackrest is not installed (apt-get install pgbackrest): the point-in-time recovery rig is skipped'
  : !existsSync(path.join(PG_BIN, 'postgres'))
    ? 'PostgreSQL 15 is not installed (apt-get install postgresql-15): the point-in-time recovery rig is skipped'
    : null;
if (skipReason && process.env.PLINTH_REQUIRE_PITR_RIG === '1') throw new Error(skipReason);
if (skipReason) console.warn(skipReason);

const STANZA = 'plinth';
const RESTORE_POINT = 'plinth-before-b';
const SECRETS = { ENCRYPTION_KEY: 'ef'.repeat(32), DASHBOARD_JWT_SECRET: '12'.repeat(32) };
const OPERATOR = { email: 'pitr-operator@example.com', password: 'correct horse battery staple' };

let dir: string;
let conf: string;
let nodeData: string;
let primary: Server;
const restored: Server[] = [];
const nodes: Node[] = [];

/** What the API wrote before and after the moment we go back to. */
let projectId: string;
/** The project's secret key (a server's key: it reads and writes whatever the collection's rules). */
let sk: { 'x-api-key': string };
let idA: string;
let idB: string;
/** Every permanent table's row count and content hash at the restore point. */
let fingerprint: Record<string, string>;
/** A moment between A's commit and B's, as pgBackRest's `--target` takes it. */
let betweenAandB: string;

/** `pgbackrest` with the rig's configuration file and stanza, as the `postgres` OS user when we are root. */
const pgbackrest = (...args: string[]) => run(PGBACKREST, [`--config=${conf}`, `--stanza=${STANZA}`, ...args]);

/** The PostgreSQL 15 server on the data directory pgBackRest knows (`pg1-path`): its settings in its own postgresql.conf, socket in the rig's dir. */
const postgres = (name: string, port: number) => server(name, port, path.join(PG_BIN, 'postgres'), ['-D', dataDir(), '-p', String(port), '-k', dir], 'plinth', 'postgres');
const dataDir = () => path.join(dir, 'data');

async function onServer<T>(s: Server, fn: (c: pg.Client) => Promise<T>, database = 'plinth'): Promise<T> {
  const c = new pg.Client({ connectionString: s.url(database) });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** `schema.table` → `rows:md5` of every permanent table (unlogged ones are emptied by any crash or restore, by design). */
async function fingerprintOf(c: pg.Client): Promise<Record<string, string>> {
  const { rows: tables } = await c.query<{ name: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND c.relpersistence = 'p' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
      ORDER BY 1`,
  );
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    const { rows } = await c.query<{ n: number; h: string }>(`SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) AS h FROM ${name} t`);
    out[name] = `${rows[0]!.n}:${rows[0]!.h}`;
  }
  return out;
}

function nodeEnv(databaseUrl: string): Record<string, string> {
  return {
    NODE_ENV: 'test',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
    PLINTH_DATA_DIR: nodeData,
    DATABASE_URL: databaseUrl,
    PLINTH_RUN_WORKER: 'false',
    DASHBOARD: 'false',
    RATE_LIMIT_SCALE: '1000',
    ...SECRETS,
  };
}

async function startNode(name: string, databaseUrl: string): Promise<Node> {
  const node = spawnNode(name, 'api', nodeEnv(databaseUrl), await freePort());
  nodes.push(node);
  await waitApiReady(node);
  return node;
}

async function operatorToken(node: Node): Promise<string> {
  const res = await call(node, 'POST', '/api/auth/login', { body: OPERATOR });
  expect(res.status, res.body).toBe(200);
  return res.json().data.token as string;
}

/** `plinth migrate --status` as an operator runs it, against `databaseUrl`. */
function migrateStatus(databaseUrl: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT_DIR, 'bin', 'plinth.js'), 'migrate', '--status'], {
      cwd: ROOT_DIR,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_FORMAT: 'json', PLINTH_DATA_DIR: nodeData, DATABASE_URL: databaseUrl, ...SECRETS },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (err += String(d)));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

/**
 * The runbook's restore: the server's data directory moved aside (kept, never deleted), an empty
 * one in its place, `pgbackrest restore` into it, the server started on the same port: it
 * replays the archive up to the target, promotes itself (`--target-action=promote`) and is
 * writable once `pg_is_in_recovery()` is false.
 */
async function restoreAndStart(name: string, options: string[]): Promise<Server> {
  renameSync(dataDir(), path.join(dir, `data.before-${name}`));
  mkdirSync(dataDir(), { mode: 0o700 });
  own(dataDir());
  pgbackrest(...options, 'restore');
  const s = postgres(name, primary.port);
  restored.push(s);
  await s.start();
  await until(`${name} to finish recovery and promote`, () => onServer(s, async (c) => !(await c.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!.r, 'postgres'), 60_000, 100).catch((err: Error) => {
    throw new Error(`${err.message}\n${s.log.slice(-20).join('\n')}`);
  });
  return s;
}

/** What a user and an operator see through Plinth booted on the restored server `s`. */
async function plinthOn(s: Server, name: string): Promise<{ node: Node; notes: string[]; collections: string[] }> {
  const status = await migrateStatus(s.url());
  expect(status.code, `${status.out}${status.err}`).toBe(0);
  expect(status.out).toMatch(/in sync/);
  const node = await startNode(name, s.url());
  const token = await operatorToken(node);
  const collections = await call(node, 'GET', `/api/projects/${projectId}/collections`, { headers: { authorization: `Bearer ${token}` } });
  expect(collections.status, collections.body).toBe(200);
  const list = await call(node, 'GET', '/api/data/notes?limit=100', { headers: sk });
  expect(list.status, list.body).toBe(200);
  return {
    node,
    notes: (list.json().data.items as Array<{ title: string }>).map((d) => d.title),
    collections: (collections.json().data as Array<{ name: string }>).map((c) => c.name).sort(),
  };
}

describe.skipIf(skipReason !== null)('point-in-time recovery of the whole server with pgBackRest', () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-pitr-'));
    own(dir);
    nodeData = mkdtempSync(path.join(os.tmpdir(), 'plinth-pitr-node-'));
    conf = path.join(dir, 'pgbackrest.conf');
    for (const sub of ['log', 'spool']) {
      mkdirSync(path.join(dir, sub));
      own(path.join(dir, sub));
    }
    run(path.join(PG_BIN, 'initdb'), ['-D', dataDir(), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    primary = postgres('primary', await freePort());
    // The runbook's configuration (docs/deploy.md), with the rig's paths and a small, fast server.
    writeFileSync(
      conf,
      [
        '[global]',
        `repo1-path=${dir}/repo`,
        'repo1-retention-full=2',
        'compress-type=lz4',
        'start-fast=y',
        'archive-timeout=60',
        `log-path=${dir}/log`,
        `lock-path=${dir}/lock`,
        `spool-path=${dir}/spool`,
        'log-level-console=warn',
        'log-level-file=info',
        '',
        `[${STANZA}]`,
        `pg1-path=${dataDir()}`,
        `pg1-port=${primary.port}`,
        `pg1-socket-path=${dir}`,
        '',
      ].join('\n'),
    );
    own(conf);
    appendFileSync(
      path.join(dataDir(), 'postgresql.conf'),
      [
        '',
        "listen_addresses = '127.0.0.1'",
        'wal_level = replica',
        'archive_mode = on',
        `archive_command = '${PGBACKREST} --config=${conf} --stanza=${STANZA} archive-push %p'`,
        'max_wal_senders = 3',
        'fsync = off',
        'shared_buffers = 32MB',
        '',
      ].join('\n'),
    );
    await primary.start();
    await onServer(primary, (c) => c.query('CREATE DATABASE plinth'), 'postgres');
    pgbackrest('stanza-create');
    pgbackrest('check');
    pgbackrest('--type=full', 'backup');

    // Plinth migrates the empty database (after the backup: the archive replays that too), and
    // an operator builds a project through the API.
    const before = await startNode('api-before', primary.url());
    expect((await call(before, 'POST', '/api/auth/register', { body: { ...OPERATOR, name: 'PITR' } })).status).toBe(201);
    const owner = { authorization: `Bearer ${await operatorToken(before)}` };
    const project = await call(before, 'POST', '/api/projects', { headers: owner, body: { name: 'Recovered' } });
    expect(project.status, project.body).toBe(201);
    projectId = project.json().data._id as string;
    sk = { 'x-api-key': project.json().data.secretKey as string };
    const notes = await call(before, 'POST', `/api/projects/${projectId}/collections`, {
      headers: owner,
      body: { name: 'notes', schema: [{ key: 'title', type: 'String' }] },
    });
    expect(notes.status, notes.body).toBe(201);
    const a = await call(before, 'POST', '/api/data/notes', { headers: sk, body: { title: 'A' } });
    expect(a.status, a.body).toBe(201);
    idA = a.json()._id as string;
    // Quiet (no node writes), so the fingerprint is exactly the state at the restore point.
    await before.kill();
    ({ fingerprint, betweenAandB } = await onServer(primary, async (c) => {
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const f = await fingerprintOf(c);
      await c.query('SELECT pg_create_restore_point($1)', [RESTORE_POINT]);
      await c.query('COMMIT');
      const t = await c.query<{ t: string }>(`SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00' AS t`);
      return { fingerprint: f, betweenAandB: t.rows[0]!.t };
    }));
    expect(Object.keys(fingerprint).length).toBeGreaterThan(20);

    // After the moment: B, and a collection that must not survive the restore either.
    const after = await startNode('api-after', primary.url());
    const b = await call(after, 'POST', '/api/data/notes', { headers: sk, body: { title: 'B' } });
    expect(b.status, b.body).toBe(201);
    idB = b.json()._id as string;
    const later = await call(after, 'POST', `/api/projects/${projectId}/collections`, { headers: owner, body: { name: 'later', schema: [{ key: 'x', type: 'String' }] } });
    expect(later.status, later.body).toBe(201);
    const both = await call(after, 'GET', '/api/data/notes?limit=100', { headers: sk });
    expect(both.json().data.items.map((d: { title: string }) => d.title).sort()).toEqual(['A', 'B']);
    await after.kill();
    const lastWal = await onServer(primary, async (c) => (await c.query<{ f: string }>('SELECT pg_walfile_name(pg_current_wal_lsn()) AS f')).rows[0]!.f);
    // The runbook's monitoring: `check` switches the WAL and waits (archive-timeout) until that segment is in the repository.
    pgbackrest('check');
    const info = JSON.parse(pgbackrest('--output=json', 'info')) as Array<{ status: { code: number }; backup: Array<{ type: string }>; archive: Array<{ max: string }> }>;
    expect(info[0]!.status.code).toBe(0);
    expect(info[0]!.backup.map((x) => x.type)).toEqual(['full']);
    expect(info[0]!.archive[0]!.max >= lastWal, `archived up to ${info[0]!.archive[0]!.max}, B is in ${lastWal}`).toBe(true);
    await primary.stop();
  }, 240_000);

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    for (const s of restored) await s.stop().catch(() => {});
    await primary?.stop().catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (nodeData) rmSync(nodeData, { recursive: true, force: true });
  }, 60_000);

  it('to a named restore point: A is there, B and the later collection are not, every table as it was, and the server takes writes', async () => {
    const s = await restoreAndStart('restore-name', ['--type=name', `--target=${RESTORE_POINT}`, '--target-action=promote']);
    expect(readFileSync(path.join(dataDir(), 'postgresql.auto.conf'), 'utf8')).toMatch(/restore_command = '.*archive-get %f "%p"'/);
    expect(s.log.join('\n')).toContain(`recovery stopping at restore point "${RESTORE_POINT}"`);
    expect(await onServer(s, fingerprintOf)).toEqual(fingerprint);
    const seen = await plinthOn(s, 'api-restored-name');
    expect(seen.notes).toEqual(['A']);
    expect(seen.collections).toEqual(['notes']);
    expect((await call(seen.node, 'GET', `/api/data/notes/${idA}`, { headers: sk })).json().data).toMatchObject({ _id: idA, title: 'A' });
    expect((await call(seen.node, 'GET', `/api/data/notes/${idB}`, { headers: sk })).status).toBe(404);
    // Promoted, not a read-only standby: the project goes on from there.
    const c = await call(seen.node, 'POST', '/api/data/notes', { headers: sk, body: { title: 'C' } });
    expect(c.status, describeFailure(seen.node)).toBe(201);
    await seen.node.kill();
    // Archiving goes on from the restored server, on its new timeline (the runbook's last step checks it).
    pgbackrest('check');
    await s.stop();
  }, 120_000);

  it('to a time between the two writes, on the backup\'s own timeline past the restore before: the same state', async () => {
    // The restore above promoted a new timeline that now archives into the same repository too;
    // `--target-timeline=current` keeps the replay on the history the backup was taken on.
    expect(existsSync(path.join(dir, 'repo', 'archive', STANZA, '15-1', '00000002.history'))).toBe(true);
    const s = await restoreAndStart('restore-time', ['--type=time', `--target=${betweenAandB}`, '--target-timeline=current', '--target-action=promote']);
    expect(s.log.join('\n')).toMatch(/recovery stopping before commit of transaction \d+, time /);
    expect(await onServer(s, fingerprintOf)).toEqual(fingerprint);
    const seen = await plinthOn(s, 'api-restored-time');
    expect(seen.notes).toEqual(['A']);
    expect(seen.collections).toEqual(['notes']);
    expect((await call(seen.node, 'GET', `/api/data/notes/${idB}`, { headers: sk })).status).toBe(404);
      await seen.node.kill();
    await s.stop();
  }, 120_000);

  it('the control: the same backup replayed to the end of the archive has B and the later collection', async () => {
    const s = await restoreAndStart('restore-end', ['--target-timeline=current']);
    expect(s.log.join('\n')).not.toMatch(/recovery stopping/);
    expect(await onServer(s, fingerprintOf)).not.toEqual(fingerprint);
    const seen = await plinthOn(s, 'api-restored-end');
    expect(seen.notes.sort()).toEqual(['A', 'B']);
    expect(seen.collections).toEqual(['later', 'notes']);
    expect((await call(seen.node, 'GET', `/api/data/notes/${idB}`, { headers: sk })).json().data).toMatchObject({ _id: idB, title: 'B' });
      await seen.node.kill();
    await s.stop();
  }, 120_000);
});

