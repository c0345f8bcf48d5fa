/**
 * The console's first load stays small: the entry chunk and every chunk it imports statically
 * (what a browser must fetch before the first screen) are at most 60 kB gzipped, read from
 * the esbuild metafile of a fresh build. The heavy parts (JSON editor, charts, most screens)
 * must stay behind dynamic imports to pass.
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { buildUi, initialChunks } from '../../scripts/build-ui.mjs';
import { ROOT_DIR } from '../../src/paths.js';

const BUDGET = 60 * 1024;
const outdir = path.join(os.tmpdir(), `plinth-ui-budget-${process.pid}`);
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const gz = (file: string) => gzipSync(readFileSync(path.join(ROOT_DIR, file)), { level: 9 }).length;

describe('console bundle budget', () => {
  it('initial JavaScript is at most 60 kB gzipped; the JSON editor is not part of it', async () => {
    const { entry, metafile } = await buildUi({ outdir });
    const initial = initialChunks(metafile, entry);
    const initialGz = initial.reduce((n, f) => n + gz(f), 0);
    const all = Object.keys(metafile.outputs).filter((f) => f.endsWith('.js'));
    const totalGz = all.reduce((n, f) => n + gz(f), 0);
    console.log(`console bundle: initial JS ${(initialGz / 1024).toFixed(1)} kB gz in ${initial.length} files; all JS ${(totalGz / 1024).toFixed(1)} kB gz in ${all.length} files`);
    expect(initialGz).toBeLessThanOrEqual(BUDGET);
    const inputsOf = (files: string[]) => files.flatMap((f) => Object.keys(metafile.outputs[f]!.inputs ?? {}));
    expect(inputsOf(initial).some((i) => i.includes('@codemirror'))).toBe(false);
    expect(inputsOf(all).some((i) => i.includes('@codemirror'))).toBe(true);
  });
});
