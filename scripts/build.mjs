// Bundles the service, the worker and `plinth migrate` (dependencies stay in node_modules) and
// the console into dist/. Runs before `npm start` / `plinth` in ~1 s, or ~20 ms when nothing
// changed: plain Node then starts faster and idles in ~40 MB less memory than transpiling
// TypeScript at run time.
//
// Atomic, so a process starting while another rebuilds never loads a half-written file: each
// build is written to its own directory under .dist/, then `dist` (a symlink) is switched to
// it by one rename(2). Builds take a lock (.dist/.lock, a directory: mkdir is atomic), so two at
// once run one after the other and the second finds the sources unchanged and does nothing.
// "Unchanged": every input esbuild read for the current build (from its metafile, with the
// build scripts and tsconfigs) still has the same content hash. The current and the previous
// build are kept (a process that resolved the link a moment ago still finds its files).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENTRIES = { main: 'src/main.ts', worker: 'src/worker/main.ts', migrate: 'src/cli/migrate.ts', types: 'src/cli/types.ts', functions: 'src/cli/functions.ts', sandbox: 'src/modules/functions/sandbox/child.ts' };
const ALWAYS_INPUTS = ['scripts/build.mjs', 'scripts/build-ui.mjs', 'tsconfig.json', 'ui/tsconfig.json', 'ui/index.html', 'package.json'];
const LOCK_STALE_MS = 10 * 60_000;

const sha = (file) => createHash('sha256').update(readFileSync(path.join(ROOT, file))).digest('hex');

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** mkdir is atomic: whoever creates the lock directory holds it. A dead holder's lock is taken over. */
async function lock(versions) {
  const dir = path.join(versions, '.lock');
  for (let waited = 0; ; waited += 50) {
    try {
      await mkdir(dir);
      await writeFile(path.join(dir, 'pid'), String(process.pid));
      return async () => rm(dir, { recursive: true, force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    const pid = Number(await readFile(path.join(dir, 'pid'), 'utf8').catch(() => '0'));
    const age = Date.now() - ((await lstat(dir).catch(() => null))?.mtimeMs ?? Date.now());
    if ((pid && !alive(pid)) || age > LOCK_STALE_MS) await rm(dir, { recursive: true, force: true });
    else if (waited > LOCK_STALE_MS) throw new Error(`build: ${dir} is held by process ${pid}`);
    await sleep(50);
  }
}

/** The version directory `dist` points to, when it is one of ours. */
async function current(link, versions) {
  const target = await readlink(link).catch(() => null);
  if (!target) return null;
  const dir = path.resolve(path.dirname(link), target);
  return path.dirname(dir) === versions && existsSync(path.join(dir, 'inputs.json')) ? dir : null;
}

function unchanged(dir) {
  const { inputs } = JSON.parse(readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
  return Object.entries(inputs).every(([file, hash]) => existsSync(path.join(ROOT, file)) && sha(file) === hash);
}

async function compile(out) {
  // Loaded only when something changed: the unchanged check stays a few milliseconds.
  const { build: esbuild } = await import('esbuild');
  const { buildUi } = await import('./build-ui.mjs');
  const server = await esbuild({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
    outdir: out,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    packages: 'external',
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
  });
  const ui = await buildUi({ outdir: path.join(out, 'ui') });
  const files = new Set([...ALWAYS_INPUTS, ...Object.keys(server.metafile.inputs), ...Object.keys(ui.metafile.inputs)]);
  const inputs = Object.fromEntries([...files].filter((f) => existsSync(path.join(ROOT, f))).sort().map((f) => [f, sha(f)]));
  await writeFile(path.join(out, 'inputs.json'), JSON.stringify({ inputs }, null, 1));
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 12);
}

/** Points `link` at `dir` in one rename. A `dist` directory from before this scheme is moved aside. */
async function switchLink(link, dir, versions) {
  const tmpLink = `${link}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await symlink(path.relative(path.dirname(link), dir), tmpLink);
  try {
    await rename(tmpLink, link);
  } catch (err) {
    if (err.code !== 'EISDIR' && err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    await rename(link, path.join(versions, `legacy-${randomBytes(4).toString('hex')}`));
    await rename(tmpLink, link);
  }
}

/** Removes every version but `keep` (current and previous) and any leftover of a killed build. */
async function prune(versions, keep) {
  for (const name of await readdir(versions)) {
    const dir = path.join(versions, name);
    if (name !== '.lock' && !keep.includes(dir)) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Builds into `<link>/../.dist/<version>` and switches `link` (default: the project's dist) to
 * it; with `force: false` (the default) does nothing when the sources are unchanged.
 */
export async function build({ link = path.join(ROOT, 'dist'), force = false } = {}) {
  const versions = path.join(path.dirname(link), '.dist');
  await mkdir(versions, { recursive: true });
  const release = await lock(versions);
  const tmp = path.join(versions, `tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    const previous = await current(link, versions);
    if (previous && !force && unchanged(previous)) return { dir: previous, built: false };
    const id = await compile(tmp);
    const dir = path.join(versions, `${Date.now().toString(36)}-${id}`);
    await rename(tmp, dir);
    await switchLink(link, dir, versions);
    await prune(versions, [dir, previous]);
    return { dir, built: true };
  } finally {
    await rm(tmp, { recursive: true, force: true });
    await release();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await build({ force: process.argv.includes('--force') });
}
