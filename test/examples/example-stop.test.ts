/**
 * `npm run example -- blog` stopped with Ctrl-C at any point of its start-up leaves nothing
 * behind: no PostgreSQL process of its cluster, no cluster (as root it lives under
 * /var/lib/plinth/clusters, linked from the data dir), no data dir (issue 46, item 11: once in
 * four runs both were left behind). Ctrl-C is SIGINT to the terminal's whole process group (the
 * script and the Plinth it runs; the postmaster has its own group), so the script runs in a
 * group of its own and the test signals that group. A second Ctrl-C must not skip the clean-up.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyEmbeddedCluster } from '../../src/db/embedded.js';
import { ROOT_DIR } from '../../src/paths.js';

const CLUSTERS = '/var/lib/plinth/clusters';
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** PostgreSQL processes (pid, data dir) whose cluster is under `tmp` or owned by a data dir there. */
function postgresOf(tmp: string): Array<{ pid: number; cluster: string }> {
  const out: Array<{ pid: number; cluster: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) continue;
    } catch {
      continue;
    }
    const d = args.indexOf('-D');
    if (d < 0 || !path.basename(args[0] ?? '').startsWith('postgres')) continue;
    const cluster = args[d + 1] ?? '';
    if (cluster.startsWith(tmp) || ownedBy(cluster, tmp)) out.push({ pid: Number(entry), cluster });
  }
  return out;
}

function ownedBy(cluster: string, tmp: string): boolean {
  try {
    return readFileSync(`${cluster}.owner`, 'utf8').trim().startsWith(tmp);
  } catch {
    return false;
  }
}

/** Clusters under the root state dir that a data dir in `tmp` owns. */
function clustersOf(tmp: string): string[] {
  if (!existsSync(CLUSTERS)) return [];
  return readdirSync(CLUSTERS).filter((f) => f.endsWith('.owner')).map((f) => path.join(CLUSTERS, f.slice(0, -6))).filter((c) => ownedBy(c, tmp));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

type Moment = 'at once' | 'data dir made' | 'cluster being made' | 'postmaster up' | 'running';

/** Runs the example, Ctrl-C at `moment` (`twice`: a second one 100 ms later); what is left behind. */
async function interrupt(moment: Moment, twice = false, command: 'example' | 'plinth' = 'example') {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'plinth-example-stop-'));
  roots.push(tmp);
  const args = command === 'example'
    ? ['--import', 'tsx', path.join(ROOT_DIR, 'scripts', 'example.ts'), 'blog']
    : [path.join(ROOT_DIR, 'bin', 'plinth.js')];
  const own = command === 'plinth' ? { PLINTH_DATA_DIR: path.join(tmp, 'plinth-example-blog-direct'), PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'json' } : {};
  const child = spawn(process.execPath, args, {
    cwd: ROOT_DIR,
    env: { ...process.env, TMPDIR: tmp, EXAMPLE_PORT: '0', ...own },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += String(c)));
  child.stderr!.on('data', (c) => (out += String(c)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let done = false;
  void exited.then(() => (done = true));
  const seen = new Map<number, string>();
  const watch = setInterval(() => {
    for (const p of postgresOf(tmp)) seen.set(p.pid, p.cluster);
    for (const c of clustersOf(tmp)) seen.set(-seen.size - 1, c);
  }, 20);
  try {
    const dataDir = () => readdirSync(tmp).find((f) => f.startsWith('plinth-example-blog-'));
    const reached: Record<Moment, () => boolean> = {
      'at once': () => true,
      'data dir made': () => !!dataDir(),
      'cluster being made': () => clustersOf(tmp).length > 0 || (!!dataDir() && existsSync(path.join(tmp, dataDir()!, 'pg'))),
      'postmaster up': () => postgresOf(tmp).length > 0,
      running: () => out.includes('example is running'),
    };
    await until(() => reached[moment]() || done, 120_000, moment);
    expect(done, `the example exited before "${moment}":\n${out}`).toBe(false);
    process.kill(-child.pid!, 'SIGINT');
    if (twice) {
      await sleep(100);
      try {
        process.kill(-child.pid!, 'SIGINT');
      } catch {
        // the group is gone already
      }
    }
    await Promise.race([exited, sleep(60_000)]);
    expect(done, `the example still runs 60 s after Ctrl-C:\n${out}`).toBe(true);
    // Whatever the group left running (the postmaster is in its own group) gets a moment to go.
    await until(() => postgresOf(tmp).length === 0, 10_000, 'the postmaster to go').catch(() => {});
    for (const p of postgresOf(tmp)) seen.set(p.pid, p.cluster);
    const alive = [...seen].filter(([pid]) => pid > 0 && existsSync(`/proc/${pid}`) && postgresOf(tmp).some((p) => p.pid === pid));
    // tsx's own cache (TMPDIR/tsx-<uid>) is not the example's.
    return { out, left: readdirSync(tmp).filter((f) => !f.startsWith('tsx-')), alive, clusters: [...new Set(seen.values())].filter((c) => existsSync(c)) };
  } finally {
    clearInterval(watch);
    if (!done) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }
    if (command === 'plinth') await destroyEmbeddedCluster(path.join(tmp, 'plinth-example-blog-direct')).catch(() => {});
    // Leave no postmaster running whatever happened (the assertions report it).
    for (const p of postgresOf(tmp)) {
      try {
        process.kill(p.pid, 'SIGQUIT');
      } catch {
        // gone
      }
    }
  }
}

describe.sequential('npm run example: Ctrl-C during start-up', { timeout: 180_000 }, () => {
  const cases: Array<[Moment, boolean]> = [
    ['at once', false],
    ['data dir made', false],
    ['cluster being made', false],
    ['postmaster up', false],
    ['postmaster up', true],
    ['running', false],
  ];
  it.each(cases)('at "%s" (twice: %s): no postgres process, no cluster, no data dir remain', async (moment, twice) => {
    const r = await interrupt(moment, twice);
    expect({ alive: r.alive, clusters: r.clusters, left: r.left }, r.out).toEqual({ alive: [], clusters: [], left: [] });
  });

  // `plinth` itself (its data dir is kept: it is not a throwaway one): a Ctrl-C while its
  // PostgreSQL starts or migrations run stops that PostgreSQL before it exits.
  it.each([false, true])('plinth, Ctrl-C with the postmaster up (twice: %s): no postgres process remains once it exits', async (twice) => {
    const r = await interrupt('postmaster up', twice, 'plinth');
    expect(r.alive, r.out).toEqual([]);
  });
});
