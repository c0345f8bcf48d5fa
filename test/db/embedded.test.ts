/**
 * The embedded PostgreSQL really starting, the way a newcomer's `npm start` and `npm test` do:
 * from a checkout in a folder only its owner may enter (a clone under /root or in a `mktemp -d`
 * folder), without opening that folder up, and when it cannot start, with a message that says
 * why and what to do. As root (CI, containers) PostgreSQL runs as the `postgres` OS user.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeStaleClusters, startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { ROOT_DIR } from '../../src/paths.js';

const asRoot = process.getuid?.() === 0;
const mode = (p: string) => statSync(p).mode & 0o777;

async function query(db: EmbeddedDatabase, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

let base: string; // like /root or a `mktemp -d` folder: only its owner may enter
const started: EmbeddedDatabase[] = [];
async function start(dataDir: string, options?: Parameters<typeof startEmbeddedPostgres>[2]): Promise<EmbeddedDatabase> {
  const db = await startEmbeddedPostgres(dataDir, 'plinth', options);
  started.push(db);
  return db;
}

beforeAll(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'plinth-embedded-'));
  expect(mode(base)).toBe(0o700);
});

afterAll(async () => {
  for (const db of started) await db.destroy().catch(() => {});
  rmSync(base, { recursive: true, force: true });
  // As root, a start that failed after initdb (the dying postmaster) left a cluster linked from
  // a data dir that is now gone: the sweep every start does removes it.
  if (asRoot) await removeStaleClusters();
});

/** A data dir inside the private folder, itself private, as a careful user would have it. */
function privateDataDir(name: string): string {
  const dir = path.join(base, name, '.plinth');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(path.dirname(dir), 0o700);
  return dir;
}

describe('embedded PostgreSQL from a folder only its owner may enter', () => {
  it('starts, leaves the folder and the data dir private, and keeps the data for the second start', async () => {
    const dataDir = privateDataDir('app');
    const first = await start(dataDir);
    await query(first, 'CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$still here$$)');
    await first.stop();

    expect(mode(base)).toBe(0o700);
    expect(mode(path.dirname(dataDir))).toBe(0o700);
    expect(mode(dataDir)).toBe(0o700);

    const second = await start(dataDir);
    expect(second.clusterDir).toBe(first.clusterDir);
    expect((await query(second, 'SELECT v FROM kept')).rows).toEqual([{ v: 'still here' }]);
    await second.stop();
  });

  it.skipIf(!asRoot)('as root, keeps the cluster where the postgres user can enter it, linked from <dataDir>/pg', async () => {
    const dataDir = privateDataDir('linked');
    const db = await start(dataDir);
    await db.stop();
    const pointer = path.join(dataDir, 'pg');
    expect(lstatSync(pointer).isSymbolicLink()).toBe(true);
    expect(realpathSync(pointer)).toBe(db.clusterDir);
    expect(db.clusterDir.startsWith(base)).toBe(false);
    const cluster = statSync(db.clusterDir);
    expect(cluster.uid).not.toBe(0); // the postgres user's
    expect(cluster.mode & 0o777).toBe(0o700);
  });

  it.skipIf(asRoot)('as an ordinary user, keeps the cluster in <dataDir>/pg', async () => {
    const dataDir = privateDataDir('in-place');
    const db = await start(dataDir);
    await db.stop();
    expect(db.clusterDir).toBe(path.join(realpathSync(dataDir), 'pg'));
    expect(lstatSync(db.clusterDir).isDirectory()).toBe(true);
  });

  it('starts afresh after the data dir was deleted to reset it', async () => {
    const dataDir = privateDataDir('reset');
    const first = await start(dataDir);
    await query(first, 'CREATE TABLE gone (v int)');
    await first.stop();
    rmSync(dataDir, { recursive: true });

    const second = await start(dataDir);
    expect(second.clusterDir).toBe(first.clusterDir);
    expect((await query(second, "SELECT to_regclass('gone') AS t")).rows).toEqual([{ t: null }]);
    await second.stop();
  });
});

describe('embedded PostgreSQL start-up failures name the cause and the fix', () => {
  /** A fake binary in a folder anyone may enter (the postgres user must reach it as root). */
  function fakeBinary(name: string, script: string): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-fake-pg-'));
    chmodSync(dir, 0o755);
    const file = path.join(dir, name);
    writeFileSync(file, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
    return file;
  }

  it('a missing initdb binary is named, with why it could not run', async () => {
    const dataDir = privateDataDir('no-binary');
    const err = await start(dataDir, { binaries: { initdb: '/nonexistent-plinth/bin/initdb' } }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('/nonexistent-plinth');
    expect((err as Error).message).toMatch(/ENOENT|does not exist/);
    expect((err as Error).message).toContain('Fix:');
  });

  it('an initdb that fails without a word is reported with its exit status, not an empty message', async () => {
    const dataDir = privateDataDir('silent-initdb');
    const initdb = fakeBinary('initdb', 'exit 3');
    const err = await start(dataDir, { binaries: { initdb } }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/^initdb failed \(exit status 3\) for .+: \(no output\)/);
    // Nothing half-made is left to trip the next start: no cluster, no link.
    expect(() => lstatSync(path.join(dataDir, 'pg'))).toThrow(/ENOENT/);
    rmSync(path.dirname(initdb), { recursive: true });
  });

  it("initdb's own output is in the message, stdout when stderr is empty", async () => {
    const dataDir = privateDataDir('chatty-initdb');
    const initdb = fakeBinary('initdb', 'echo "could not create directory: No space left on device"; exit 1');
    const err = await start(dataDir, { binaries: { initdb } }).catch((e: Error) => e);
    expect((err as Error).message).toContain('exit status 1');
    expect((err as Error).message).toContain('No space left on device');
    rmSync(path.dirname(initdb), { recursive: true });
  });

  it("a postmaster that dies at start is reported with its exit status and last words", async () => {
    const dataDir = privateDataDir('dying-postmaster');
    const postgres = fakeBinary('postgres', 'echo "FATAL:  could not map anonymous shared memory" >&2; exit 2');
    const err = await start(dataDir, { binaries: { postgres } }).catch((e: Error) => e);
    expect((err as Error).message).toContain('exited with status 2');
    expect((err as Error).message).toContain('could not map anonymous shared memory');
    rmSync(path.dirname(postgres), { recursive: true });
  });

  it.skipIf(!asRoot)('as root, the directory the postgres user cannot enter is named before initdb runs', async () => {
    const dataDir = privateDataDir('unreachable');
    // An operator pointed the cluster into the private folder: the postgres user cannot get there.
    symlinkSync(path.join(base, 'hidden', 'cluster'), path.join(dataDir, 'pg'));
    const err = await start(dataDir).catch((e: Error) => e);
    expect((err as Error).message).toContain(`cannot enter ${base} (mode 0700`);
    expect((err as Error).message).toContain('"postgres" OS user');
    expect((err as Error).message).toContain('Fix:');
    expect(mode(base)).toBe(0o700);
  });

  it.skipIf(!asRoot)('npm start prints the cause after "Plinth failed to start:", not an empty error', async () => {
    const dataDir = privateDataDir('main');
    symlinkSync(path.join(base, 'hidden', 'cluster'), path.join(dataDir, 'pg'));
    const env = { ...process.env, PLINTH_DATA_DIR: dataDir, DATABASE_URL: '', PORT: '0', LOG_LEVEL: 'warn' };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain(`Plinth failed to start: the embedded PostgreSQL cannot start`);
    expect(stderr).toContain(`cannot enter ${base}`);
    expect(existsSync(path.join(base, 'hidden'))).toBe(false);
  });
});

describe('an embedded PostgreSQL whose owner was killed and whose data dir was deleted', () => {
  /** Like `npm start` as root: the embedded PostgreSQL in a child process, which prints its cluster. */
  async function startInChild(dataDir: string): Promise<{ child: ReturnType<typeof spawn>; clusterDir: string }> {
    const script = `import('./src/db/embedded.ts').then((m) => m.startEmbeddedPostgres(${JSON.stringify(dataDir)})).then((db) => console.log('CLUSTER ' + db.clusterDir))`;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT_DIR, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const clusterDir = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /CLUSTER (\S+)\n/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) before its PostgreSQL was up: ${out}`)));
    });
    return { child, clusterDir };
  }

  const postmasterPid = (clusterDir: string) => Number(readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };

  it.skipIf(!asRoot)('the next start stops it and removes its cluster instead of leaving it running', async () => {
    const dataDir = privateDataDir('killed');
    const { child, clusterDir } = await startInChild(dataDir);
    const pid = postmasterPid(clusterDir);
    child.kill('SIGKILL'); // the postmaster is in its own process group: it survives its owner
    await new Promise((r) => child.once('close', r));
    expect(alive(pid)).toBe(true);
    rmSync(dataDir, { recursive: true }); // the data dir deleted to reset it

    await removeStaleClusters(); // what every start as root does first
    expect(alive(pid)).toBe(false);
    expect(existsSync(clusterDir)).toBe(false);
    expect(existsSync(`${clusterDir}.owner`)).toBe(false);
  }, 60_000);
});
