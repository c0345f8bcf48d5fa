// Builds the operator console (ui/) into dist/ui: esbuild bundles the Preact TSX with code
// splitting (each screen and the heavy parts are chunks loaded on demand), content-hashed file
// names (served `immutable`), and an index.html that names them (served `no-cache`). The
// metafile is kept as dist/ui/meta.json: test/ui/bundle-budget.test.ts reads it.
import { build } from 'esbuild';
import process from 'node:process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The entry chunk and every chunk it imports statically: what a first visit must load. */
export function initialChunks(metafile, entry) {
  const seen = new Set();
  const walk = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const imp of metafile.outputs[file]?.imports ?? []) if (imp.kind === 'import-statement') walk(imp.path);
  };
  walk(entry);
  return [...seen];
}

export async function buildUi({ outdir = path.join(ROOT, 'dist', 'ui'), minify = true } = {}) {
  const assets = path.join(outdir, 'assets');
  await rm(outdir, { recursive: true, force: true });
  await mkdir(assets, { recursive: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { app: 'ui/src/main.tsx' },
    outdir: assets,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'firefox115', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: 'ui/tsconfig.json',
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    minify,
    sourcemap: 'linked',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const { metafile } = result;
  const rel = (file) => path.relative(outdir, path.join(ROOT, file)).split(path.sep).join('/');
  const [entry] = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint === 'ui/src/main.tsx');
  const css = metafile.outputs[entry].cssBundle;
  const preload = initialChunks(metafile, entry).filter((f) => f !== entry);
  const template = await readFile(path.join(ROOT, 'ui', 'index.html'), 'utf8');
  const head = [
    css ? `<link rel="stylesheet" href="./${rel(css)}">` : '',
    ...preload.map((f) => `<link rel="modulepreload" href="./${rel(f)}">`),
    `<script type="module" src="./${rel(entry)}"></script>`,
  ].filter(Boolean).join('\n    ');
  await writeFile(path.join(outdir, 'index.html'), template.replace('<!-- assets -->', head));
  await writeFile(path.join(outdir, 'meta.json'), JSON.stringify({ entry, metafile }));
  return { outdir, entry, metafile };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildUi();
