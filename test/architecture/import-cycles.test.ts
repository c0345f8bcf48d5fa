/**
 * No import cycles among src/ files (CONTRIBUTING.md, "The rules"), type-only imports included:
 * a cycle ties its files together, so none can be read, tested or moved without the others.
 * Every route file used to import the `App` type from src/server.ts, which imports the routes:
 * one cycle of 87 files. The imports are read from the source (static `import`/`export … from`
 * and `import('…')`), relative ones resolved to their .ts file; the strongly connected components
 * of that graph (Tarjan) with more than one file, or a file importing itself, are the cycles.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ts$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'));
}

/** Code without comments (a comment may show an import). */
const code = (f: string) => readFileSync(join(root, f), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The src/ files `file` imports (relative specifiers only: packages cannot close a cycle). */
function importsOf(file: string, text = code(file)): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1] ?? m[2] ?? m[3]!;
    if (!spec.startsWith('.')) continue;
    const abs = resolve(root, dirname(file), spec);
    const candidates = [abs.replace(/\.js$/, '.ts'), `${abs}.ts`, join(abs, 'index.ts')];
    const hit = candidates.find((c) => existsSync(c));
    if (hit) out.push(relative(root, hit).split(sep).join('/'));
  }
  return out;
}

/** The cycles of a graph: its strongly connected components with more than one node, or a self-import. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('import cycles', () => {
  it('finds a cycle, type-only imports included (the check itself works)', () => {
    const imports = importsOf('src/x.ts', "import type { A } from './a.js';\nexport { b } from './lib/b.js';\nconst c = await import('./c.js');");
    expect(imports).toEqual([]); // none of these files exists
    const graph = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']], ['e', ['e']]]);
    expect(cyclesOf(graph)).toEqual([['a', 'b', 'c'], ['e']]);
  });

  it('reads the imports of a real file, type-only ones included', () => {
    expect(importsOf('src/route-groups.ts')).toEqual(expect.arrayContaining(['src/context.ts', 'src/modules/operators/guards.ts']));
  });

  it('there is no import cycle among the files of src/', () => {
    const graph = new Map(sourceFiles('src').map((f) => [f, importsOf(f)]));
    const cycles = cyclesOf(graph).map((c) => `${c.length} files: ${c.join(', ')}`);
    expect(cycles).toEqual([]);
  });
});
