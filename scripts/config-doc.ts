/**
 * Writes README.md's configuration table from src/config-reference.ts (between the
 * `config-reference:start` and `config-reference:end` markers).
 *
 *   npm run docs:config          rewrites the table
 *   test/config.reference        fails when the README's table differs from this rendering
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CONFIG_REFERENCE, type ConfigVariable } from '../src/config-reference.js';

export const readmePath = join(fileURLToPath(new URL('..', import.meta.url)), 'README.md');

const START = /<!-- config-reference:start[^\n]*-->\n/;
const END = '<!-- config-reference:end -->';

function row(v: ConfigVariable): string {
  const names = v.names.map((n) => `\`${n}\``).join(', ');
  return `| ${names} | ${v.default} | ${v.meaning} |`;
}

export function renderConfigTable(reference: readonly ConfigVariable[] = CONFIG_REFERENCE): string {
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...reference.map(row)].join('\n') + '\n';
}

/** The README with its table replaced by the rendering of the reference. */
export function withConfigTable(readme: string): string {
  const start = START.exec(readme);
  const end = readme.indexOf(END);
  if (!start || end < start.index) throw new Error('README.md lacks the config-reference markers');
  const from = start.index + start[0].length;
  return readme.slice(0, from) + renderConfigTable() + readme.slice(end);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(readmePath, withConfigTable(readFileSync(readmePath, 'utf8')));
  console.log('wrote the configuration table of README.md');
}
