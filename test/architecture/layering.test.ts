/**
 * The layering rule of CONTRIBUTING.md, checked on the source so it cannot erode:
 * - statements run against PostgreSQL only from a `queries.ts` / `*-queries.ts` file, or from
 *   the infrastructure layers src/db/ (connections, migrations, the bus) and src/worker/
 *   (graphile-worker's own tables): a DBA reads every query of a domain in one place;
 * - src/db/, src/plugins/ and src/lib/ never import a domain (src/modules/): the domains
 *   depend on them, not the other way round;
 * - no empty source files;
 * - the repository cites only documents it contains.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function files(dir: string, ext = /\.ts$/): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && ext.test(e.name))
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'));
}

const source = (f: string) => readFileSync(join(root, f), 'utf8');
/** Code without comments (a comment may mention a statement). */
const code = (f: string) => source(f).replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

// A statement's execute (not a transaction's `.execute(async (tx) => …)`, not `this.execute`).
const RUNS_SQL = /(?<!this)\.(execute|executeTakeFirst|executeTakeFirstOrThrow)\((?!\s*(async\s*)?\(?\w*\)?\s*=>)|\bclient\.query\(|\bpool\.query\(/;
const MAY_RUN_SQL = (f: string) => /(^|\/)([a-z-]+-)?queries\.ts$/.test(f) || f.startsWith('src/db/') || f.startsWith('src/worker/');

describe('layering', () => {
  it('runs SQL only in queries files and the database/worker infrastructure', () => {
    const offenders = files('src').filter((f) => !MAY_RUN_SQL(f) && RUNS_SQL.test(code(f)));
    expect(offenders).toEqual([]);
  });

  it('keeps src/db, src/plugins and src/lib free of imports from the domains', () => {
    const offenders = ['src/db', 'src/plugins', 'src/lib']
      .flatMap((d) => files(d))
      .filter((f) => /from '(\.\.\/)+modules\//.test(source(f)));
    expect(offenders).toEqual([]);
  });

  it('has no empty source files', () => {
    const empty = files('src').filter((f) => code(f).trim().split('\n').filter((l) => l.trim()).length < 2);
    expect(empty).toEqual([]);
  });

  it('cites only documents the repository contains', () => {
    const texts = [...files('src'), ...files('test'), ...files('docs', /\.md$/), 'README.md', 'CONTRIBUTING.md'].filter((f) => f !== 'test/architecture/layering.test.ts');
    const missing: string[] = [];
    const foreign: string[] = [];
    for (const f of texts) {
      const text = source(f);
      for (const [, doc] of text.matchAll(/\b(docs\/[a-z0-9-]+\.md)/g)) if (!existsSync(join(root, doc!))) missing.push(`${f}: ${doc}`);
      if (/contract §|contract\.md|DESIGN\.md|\/work\/shared|service-api\.md/.test(text)) foreign.push(f);
    }
    expect(missing).toEqual([]);
    expect(foreign).toEqual([]);
  });
});
