/**
 * The configuration reference cannot drift from the code: every variable src/config.ts reads
 * is documented in src/config-reference.ts, every documented variable is read, and README.md's
 * table is the rendering of that list (`npm run docs:config`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { CONFIG_REFERENCE } from '../src/config-reference.js';
import { readmePath, withConfigTable } from '../scripts/config-doc.js';

const dataDir = mkdtempSync(join(tmpdir(), 'plinth-config-ref-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** The names loadConfig asks the environment for. */
function variablesRead(): Set<string> {
  const read = new Set<string>();
  const env = new Proxy({ PLINTH_DATA_DIR: dataDir } as Record<string, string | undefined>, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return Reflect.get(target, name);
    },
  });
  loadConfig(env as NodeJS.ProcessEnv, false);
  return read;
}

describe('configuration reference', () => {
  const documented = CONFIG_REFERENCE.flatMap((v) => v.names);

  it('documents every variable config.ts reads, and only those', () => {
    const read = [...variablesRead()].sort();
    expect([...documented].sort()).toEqual(read);
  });

  it('names each variable once', () => {
    expect(new Set(documented).size).toBe(documented.length);
  });

  it("README.md's configuration table is generated from the reference", () => {
    const readme = readFileSync(readmePath, 'utf8');
    expect(readme).toBe(withConfigTable(readme));
  });
});
