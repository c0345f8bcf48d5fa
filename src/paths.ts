/**
 * The project root (where package.json, migrations/ and sql/ live), found by walking up from
 * this module, so it is right both from src/ (tsx, tests) and from the dist/ bundle.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(path.join(dir, 'migrations')) || !existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the Plinth root above ${start}`);
    dir = parent;
  }
  return dir;
}

export const ROOT_DIR = findRoot(path.dirname(fileURLToPath(import.meta.url)));

/** The built sandbox process entry (scripts/build.mjs; `plinth` and the tests build it first). */
export const SANDBOX_SCRIPT = path.join(ROOT_DIR, 'dist', 'sandbox.js');
