/**
 * `npm start` and `npm run worker` build before they run, so builds and loaders meet: two
 * builds at once both succeed, a process loading dist/ meanwhile only ever sees complete files,
 * nothing of a build is left behind, and an unchanged source tree is not rebuilt.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { build } from '../../scripts/build.mjs';
import { ROOT_DIR } from '../../src/paths.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'plinth-build-'));
const link = path.join(tmp, 'dist');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function buildInChild(): Promise<number | null> {
  const script = `const m = await import(${JSON.stringify(pathToFileURL(path.join(ROOT_DIR, 'scripts', 'build.mjs')).href)}); await m.build({ link: ${JSON.stringify(link)}, force: true });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
  return new Promise((resolve) => child.on('exit', resolve));
}

/** Reads what a starting process would load; returns false for a partial or inconsistent view. */
function loadLooksComplete(): boolean | null {
  let main: string;
  let index: string;
  try {
    main = readFileSync(path.join(link, 'main.js'), 'utf8');
    index = readFileSync(path.join(link, 'ui', 'index.html'), 'utf8');
  } catch {
    return null; // no build yet
  }
  if (!main.trimEnd().endsWith('//# sourceMappingURL=main.js.map')) return false;
  const assets = [...index.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
  return assets.length > 0 && assets.every((a) => existsSync(path.join(link, 'ui', a)));
}

describe('atomic build', () => {
  it('two concurrent builds and a loader: every load sees complete files, no temporary directory or lock is left', async () => {
    const builds = Promise.all([buildInChild(), buildInChild()]);
    let done = false;
    void builds.finally(() => (done = true));
    const views: Array<boolean | null> = [];
    while (!done) {
      views.push(loadLooksComplete());
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await builds).toEqual([0, 0]);
    expect(views).not.toContain(false);
    expect(loadLooksComplete()).toBe(true);
    const left = readdirSync(path.join(tmp, '.dist'));
    expect(left.filter((n) => n.startsWith('tmp-') || n === '.lock')).toEqual([]);
    expect(left.length).toBeLessThanOrEqual(2); // the current build and the previous one
    for (const f of ['main.js', 'worker.js', 'migrate.js', 'ui/index.html']) expect(existsSync(path.join(link, f))).toBe(true);
  }, 120_000);

  it('does not rebuild unchanged sources, and replaces a dist/ directory of the old layout', async () => {
    const before = realpathSync(link);
    expect(await build({ link })).toEqual({ dir: before, built: false });

    rmSync(link, { recursive: true, force: true });
    mkdirSync(link);
    writeFileSync(path.join(link, 'main.js'), '// an old in-place build');
    const rebuilt = await build({ link });
    expect(rebuilt.built).toBe(true);
    expect(realpathSync(link)).toBe(rebuilt.dir);
    expect(loadLooksComplete()).toBe(true);
  }, 120_000);
});
