#!/usr/bin/env node
// `plinth` (API + in-process worker) or `plinth worker` (jobs only). Runs the TypeScript
// sources through tsx, exactly like `npm start`.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = process.argv[2] === 'worker' ? 'src/worker/main.ts' : 'src/main.ts'; // run from source
const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, entry)], { stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
