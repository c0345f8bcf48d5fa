// Builds dist/: each source file compiled by esbuild to its own ES module (no bundling, so a
// bundler tree-shakes by file and by export), and the .d.ts by tsc. Uses the repository's
// esbuild and typescript (development tools; the package has no runtime dependencies).
import { readdirSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dir = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
rmSync(path.join(dir, 'dist'), { recursive: true, force: true });
const entryPoints = readdirSync(path.join(dir, 'src')).filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, 'src', f));
await build({ entryPoints, outdir: path.join(dir, 'dist'), format: 'esm', target: 'es2020', platform: 'neutral', bundle: false, logLevel: 'warning' });
const tsc = require.resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { stdio: 'inherit' });
