/**
 * Where the embedded PostgreSQL's binaries and cluster go. As an ordinary user: the package's
 * binaries, the cluster in `<dataDir>/pg`. As root, PostgreSQL runs as the `postgres` user, which
 * cannot enter a project under /root or a 0700 temp folder: binaries copied to and cluster kept
 * under /var/lib/plinth, `<dataDir>/pg` a symlink to it, and never a chmod of the user's folders.
 */
import { describe, expect, it } from 'vitest';
import {
  type ClusterState, type Pointer, ROOT_STATE_DIR, clusterKey, embeddedLayout, planCluster, staleClusters,
} from '../../src/db/embedded-layout.js';

const dataDir = '/root/app/.plinth';
const user = embeddedLayout({ dataDir, asRoot: false, pgVersion: '17.6.0-beta.15' });
const root = embeddedLayout({ dataDir, asRoot: true, pgVersion: '17.6.0-beta.15' });
const state = (states: Record<string, ClusterState>) => (dir: string) => states[dir] ?? 'absent';
const missing: Pointer = { kind: 'missing' };
const directory: Pointer = { kind: 'directory' };

describe('embedded PostgreSQL layout as an ordinary user', () => {
  it('runs the package binaries and keeps the cluster in <dataDir>/pg', () => {
    expect(user).toMatchObject({ installDir: null, defaultCluster: '/root/app/.plinth/pg', pointer: '/root/app/.plinth/pg', scratchDir: dataDir, clustersDir: null });
  });

  it('initialises a first cluster in place and reuses it on the second start', () => {
    expect(planCluster(user, missing, state({}))).toEqual({ clusterDir: user.pointer, action: 'init', link: false });
    expect(planCluster(user, directory, state({ [user.pointer]: 'initialised' }))).toEqual({ clusterDir: user.pointer, action: 'reuse', link: false });
  });

  it('re-runs initdb over a half-made cluster (a killed initdb) instead of failing on it', () => {
    expect(planCluster(user, directory, state({ [user.pointer]: 'partial' })).action).toBe('init');
  });
});

describe('embedded PostgreSQL layout as root', () => {
  it('copies the binaries to a root-owned versioned install dir and puts the cluster under the state dir', () => {
    expect(root.installDir).toBe(`${ROOT_STATE_DIR}/pg-17.6.0-beta.15`);
    expect(root.defaultCluster).toBe(`${ROOT_STATE_DIR}/clusters/${clusterKey(dataDir)}`);
    expect(root.pointer).toBe('/root/app/.plinth/pg');
    // initdb's password file must be readable by the postgres user: not in the user's 0700 folder.
    expect(root.scratchDir).toBe(`${ROOT_STATE_DIR}/clusters`);
    expect(root.defaultCluster.startsWith(dataDir)).toBe(false);
  });

  it('gives each data dir its own cluster, the same one every time', () => {
    expect(clusterKey(dataDir)).toBe(clusterKey(dataDir));
    expect(clusterKey(dataDir)).not.toBe(clusterKey('/root/other/.plinth'));
    expect(clusterKey(dataDir)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('honours another state dir', () => {
    expect(embeddedLayout({ dataDir, asRoot: true, pgVersion: '1', stateDir: '/srv/plinth' }).installDir).toBe('/srv/plinth/pg-1');
  });

  it('initialises a first cluster in the default place and links it from <dataDir>/pg', () => {
    expect(planCluster(root, missing, state({}))).toEqual({ clusterDir: root.defaultCluster, action: 'init', link: true });
  });

  it('follows the link on the second start and reuses the cluster', () => {
    const pointer: Pointer = { kind: 'symlink', target: root.defaultCluster };
    expect(planCluster(root, pointer, state({ [root.defaultCluster]: 'initialised' }))).toEqual({ clusterDir: root.defaultCluster, action: 'reuse', link: false });
  });

  it('replaces the cluster of a data dir that was deleted to reset it (the link and the password are gone)', () => {
    expect(planCluster(root, missing, state({ [root.defaultCluster]: 'initialised' }))).toEqual({ clusterDir: root.defaultCluster, action: 'replace-stale', link: true });
  });

  it("keeps a cluster made in place by an earlier version, and replaces only a failed attempt's empty directory", () => {
    expect(planCluster(root, directory, state({ [root.pointer]: 'initialised' }))).toEqual({ clusterDir: root.pointer, action: 'reuse', link: false });
    expect(planCluster(root, directory, state({ [root.pointer]: 'partial' }))).toEqual({ clusterDir: root.defaultCluster, action: 'init', link: true });
  });

  it('initialises where an operator-made link points when nothing is there yet', () => {
    const pointer: Pointer = { kind: 'symlink', target: '/srv/pg/plinth' };
    expect(planCluster(root, pointer, state({}))).toEqual({ clusterDir: '/srv/pg/plinth', action: 'init', link: false });
  });
});

describe('clusters whose data dir is gone', () => {
  const clusters = '/var/lib/plinth/clusters';
  it('are the ones no data dir links to any more; unowned ones are left alone', () => {
    const owners = [
      { key: 'aaaa', dataDir: '/tmp/kept' },
      { key: 'bbbb', dataDir: '/tmp/deleted' },
      { key: 'cccc', dataDir: '/tmp/relinked' },
      { key: 'dddd', dataDir: null },
    ];
    const links: Record<string, string> = { '/tmp/kept': `${clusters}/aaaa`, '/tmp/relinked': '/elsewhere' };
    expect(staleClusters(clusters, owners, (d) => links[d] ?? null)).toEqual([`${clusters}/bbbb`, `${clusters}/cccc`]);
  });
});
