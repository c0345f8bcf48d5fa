/**
 * Where the embedded PostgreSQL's binaries and cluster live: pure decisions, no I/O, so every
 * case is a unit test (test/db/embedded-layout.test.ts); src/db/embedded.ts gathers the facts
 * and carries the plan out.
 *
 * As an ordinary user, PostgreSQL runs as ourselves: binaries straight from node_modules, the
 * cluster in `<dataDir>/pg`. As root it must run as the unprivileged `postgres` user, which
 * often cannot enter the project at all (a clone under /root or a `mktemp -d` folder is 0700).
 * We never open up the user's folders; instead the binaries are copied once to a root-owned,
 * world-readable install dir and the cluster lives under the state dir, with `<dataDir>/pg` a
 * symlink to it, so the data still visibly belongs to this data dir and a second start finds it.
 */
import path from 'node:path';
import { sha256Hex } from '../lib/crypto.js';

/** Where Plinth keeps what the `postgres` OS user must reach when we run as root. */
export const ROOT_STATE_DIR = '/var/lib/plinth';

export interface LayoutInput {
  /** The project's data dir, absolute and with symlinks resolved (one data dir, one key). */
  dataDir: string;
  asRoot: boolean;
  /** The platform package's version: a new package version gets its own install dir. */
  pgVersion: string;
  /** Defaults to ROOT_STATE_DIR; tests may point it elsewhere. */
  stateDir?: string;
}

export interface EmbeddedLayout {
  asRoot: boolean;
  /** `<dataDir>/pg`: the cluster itself (user) or a symlink to it (root). */
  pointer: string;
  /** Where a fresh cluster goes when the pointer does not name one yet. */
  defaultCluster: string;
  /** A copy of the package's bin/lib/share the `postgres` user can execute; null: use the package. */
  installDir: string | null;
  /** A directory the server's user can read, for initdb's short-lived password file. */
  scratchDir: string;
  /** As root: the directory holding all clusters (one per data dir, named by clusterKey). */
  clustersDir: string | null;
}

/** A short, stable name for a data dir: the same path always maps to the same cluster. */
export function clusterKey(dataDir: string): string {
  return sha256Hex(dataDir).slice(0, 16);
}

export function embeddedLayout(input: LayoutInput): EmbeddedLayout {
  const pointer = path.join(input.dataDir, 'pg');
  if (!input.asRoot) {
    return { asRoot: false, pointer, defaultCluster: pointer, installDir: null, scratchDir: input.dataDir, clustersDir: null };
  }
  const stateDir = input.stateDir ?? ROOT_STATE_DIR;
  const clustersDir = path.join(stateDir, 'clusters');
  return {
    asRoot: true,
    pointer,
    defaultCluster: path.join(clustersDir, clusterKey(input.dataDir)),
    installDir: path.join(stateDir, `pg-${input.pgVersion}`),
    scratchDir: clustersDir,
    clustersDir,
  };
}

/** What `<dataDir>/pg` is on disk. */
export type Pointer = { kind: 'missing' } | { kind: 'directory' } | { kind: 'symlink'; target: string };

/** A cluster directory: initialised (has PG_VERSION), left half-made, or not there. */
export type ClusterState = 'initialised' | 'partial' | 'absent';

export interface ClusterPlan {
  clusterDir: string;
  /**
   * reuse: start it. init: (remove what is there, then) initdb. replace-stale: the default
   * cluster exists but the data dir no longer points to it (the data dir was deleted to reset
   * it; its password is gone too), so it is removed and initialised afresh.
   */
  action: 'reuse' | 'init' | 'replace-stale';
  /** Make `<dataDir>/pg` a symlink to clusterDir (replacing a failed attempt's empty directory). */
  link: boolean;
}

export function planCluster(layout: EmbeddedLayout, pointer: Pointer, stateOf: (dir: string) => ClusterState): ClusterPlan {
  // A symlink names the cluster (made by an earlier start as root, or by the operator).
  if (pointer.kind === 'symlink') return { clusterDir: pointer.target, action: reuseOrInit(stateOf(pointer.target)), link: false };
  // A directory is a cluster in place: every non-root start, and root starts before this layout.
  if (!layout.asRoot) return { clusterDir: layout.pointer, action: reuseOrInit(stateOf(layout.pointer)), link: false };
  if (pointer.kind === 'directory' && stateOf(layout.pointer) === 'initialised') return { clusterDir: layout.pointer, action: 'reuse', link: false };
  // As root with no cluster yet (or only a failed attempt's empty directory): the default place.
  const state = stateOf(layout.defaultCluster);
  return { clusterDir: layout.defaultCluster, action: state === 'absent' ? 'init' : 'replace-stale', link: true };
}

function reuseOrInit(state: ClusterState): ClusterPlan['action'] {
  return state === 'initialised' ? 'reuse' : 'init';
}

/**
 * The clusters under clustersDir that no data dir points to any more (their data dir was deleted:
 * a finished test run, a reset), given each cluster's recorded owner and where that owner's
 * pointer leads now. Clusters without a recorded owner are left alone (one may be being made).
 */
export function staleClusters(
  clustersDir: string,
  owners: ReadonlyArray<{ key: string; dataDir: string | null }>,
  pointerTarget: (dataDir: string) => string | null,
): string[] {
  return owners
    .filter((o) => o.dataDir !== null && pointerTarget(o.dataDir) !== path.join(clustersDir, o.key))
    .map((o) => path.join(clustersDir, o.key));
}
