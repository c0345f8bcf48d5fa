#!/usr/bin/env node
// The `plinth` command: one entry for the built service. In a checkout it first brings dist/ up
// to date (scripts/build.mjs: atomic, and a no-op when the sources are unchanged); in the
// production image (no sources) it runs the dist/ that was built into it. The bundle runs in
// this process (no tsx, no second Node), with source maps for stack traces.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const COMMANDS = {
  start: { entry: 'main.js', about: 'the API and, unless PLINTH_RUN_WORKER=false, the job worker (like `npm start`)' },
  worker: { entry: 'worker.js', about: 'a job worker only (needs DATABASE_URL; run any number of them)' },
  migrate: { entry: 'migrate.js', about: 'apply the database migrations, then exit', options: ['--status'] },
  types: {
    entry: 'types.js',
    about: 'write a .d.ts of a project\'s collections for @plinth/client:\n           --url URL (--token T --project ID | --secret-key SK --collections a,b) [--out FILE]',
    args: true,
  },
  functions: { entry: 'functions.js', about: "deploy <folder> | list: a project's functions through a running server (docs/functions.md)", args: true },
};

const usage = `Usage: plinth [command]

Commands:
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(11)}${c.about}`).join('\n')}
  migrate --status
           change nothing: list the migrations applied, with their checksums, and any drift
           (exit 0 in sync, 3 on drift, 4 when migrations are pending)

  (no command runs \`start\`)

Options:
  -h, --help     show this help
  -v, --version  print the version

Settings come from the environment (PORT, DATABASE_URL, LOG_FORMAT, ...): see README.md.`;

const arg = process.argv[2];
if (arg === '-h' || arg === '--help' || arg === 'help') {
  console.log(usage);
  process.exit(0);
}
if (arg === '-v' || arg === '--version') {
  console.log(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version);
  process.exit(0);
}
const command = COMMANDS[arg ?? 'start'];
const options = process.argv.slice(3);
// `types` and `functions` take their own arguments (src/cli/types.ts); the others only the options they list.
if (!command || (!command.args && options.some((o) => !(command.options ?? []).includes(o)))) {
  console.error(`plinth: unknown command "${process.argv.slice(2).join(' ')}"\n\n${usage}`);
  process.exit(2);
}

const script = path.join(root, 'scripts', 'build.mjs');
if (existsSync(script) && existsSync(path.join(root, 'src'))) {
  const { build } = await import(pathToFileURL(script).href);
  await build();
}
const entry = path.join(root, 'dist', command.entry);
if (!existsSync(entry)) {
  console.error(`plinth: ${entry} is missing: run \`npm run build\` (or \`npm ci\` in a checkout).`);
  process.exit(1);
}
process.setSourceMapsEnabled(true);
const loaded = await import(pathToFileURL(entry).href);
// `functions` exports main(args, env) and answers with its exit code (`types` runs on import).
if (command.args && typeof loaded.main === 'function') process.exitCode = await loaded.main(process.argv.slice(3), process.env);
