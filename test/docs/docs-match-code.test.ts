/**
 * The docs cannot name what the code does not have (issue 46, item 10): every `METHOD /api/…`
 * route README.md and docs/*.md mention is a route the app registers, and every environment
 * variable they name is in the configuration reference (src/config-reference.ts) or is read by
 * the repository's own tooling (bench/, scripts/, test/, examples/). Path parameters may be
 * written `:name`, `{name}` or `<name>`, and a concrete value (`/api/data/notes/:id`) matches a
 * parameter; `[/:id]` is an optional segment, `...` any rest, a query string is ignored.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_REFERENCE } from '../../src/config-reference.js';
import { ROOT_DIR } from '../../src/paths.js';
import { routesOf } from '../../src/plugins/route-table.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';

const DOCS = ['README.md', ...readdirSync(path.join(ROOT_DIR, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (file: string) => readFileSync(path.join(ROOT_DIR, file), 'utf8');

/** Mentions of a route that are examples, not routes of the API (file, mention, why). */
const NOT_ROUTES = new Map<string, string>([
  ['GET /api/x', 'README: how a request looks in the pretty log format'],
]);

/**
 * Upper-case names the docs use that are neither Plinth's variables nor its constants: shell
 * placeholders in examples, and the variables of the shared benchmark suite (outside this repo).
 */
const NOT_VARIABLES = new Map<string, string>([
  ['PLINTH_DATABASE_URL', "the shared benchmark suite's variable (docs/benchmarks.md, docs/data.md)"],
  ['PLINTH_CHECKOUT', "the shared benchmark suite's variable (docs/benchmarks.md)"],
]);

export interface Mention {
  file: string;
  line: number;
  text: string;
}

function mentions(re: RegExp, pick: (m: RegExpExecArray) => string | undefined): Mention[] {
  const out: Mention[] = [];
  for (const file of DOCS) {
    read(file).split('\n').forEach((line, i) => {
      for (const m of line.matchAll(new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g'))) {
        const text = pick(m as RegExpExecArray);
        if (text) out.push({ file, line: i + 1, text });
      }
    });
  }
  return out;
}

// ---- routes ----------------------------------------------------------------------------------

const METHOD = 'GET|POST|PUT|PATCH|DELETE|HEAD';
/** `GET /api/…`, or several methods for one path: `GET|PUT|DELETE /api/…/oidc[/:providerId]`. */
const ROUTE_MENTION = new RegExp(`\\b((?:${METHOD})(?:\\|(?:${METHOD}))*)\\s+(\\/api\\/[^\\s\`)|,;"'*]*)`, 'g');

/** A documented path as alternatives of segments (`null` = a parameter, `'...'` = any rest). */
export function docPathVariants(raw: string): Array<Array<string | null>> {
  // `[/:id]`: with and without the optional part.
  const opt = /\[([^\]]*)\]/.exec(raw);
  if (opt) {
    const without = raw.slice(0, opt.index) + raw.slice(opt.index + opt[0].length);
    const withIt = raw.slice(0, opt.index) + opt[1] + raw.slice(opt.index + opt[0].length);
    return [...docPathVariants(without), ...docPathVariants(withIt)];
  }
  // The query string, and a sentence's full stop or colon after the path (not a `...` rest).
  let p = raw.replace(/[?#].*$/, '');
  if (!/(\.\.\.|…)$/.test(p)) p = p.replace(/[.:]+$/, '');
  p = p.replace(/\/+$/, '');
  return [
    p
      .split('/')
      .slice(1)
      .map((s) => (s === '...' || s === '…' ? '...' : /^(:\w+|\{[^}]+\}|<[^>]+>)$/.test(s) ? null : s)),
  ];
}

/** Whether the documented segments name the registered route (its parameters written `:name`). */
export function matchesRoute(doc: Array<string | null>, route: string): boolean {
  const reg = route.split('/').slice(1);
  for (let i = 0; i < doc.length; i++) {
    const d = doc[i];
    if (d === '...') return reg.length > i;
    const r = reg[i];
    if (r === undefined) return false;
    if (r === '*') return true;
    if (r.startsWith(':')) continue; // a parameter: a documented parameter or a concrete value
    if (d !== r) return false;
  }
  return doc.length === reg.length;
}

// ---- environment variables -------------------------------------------------------------------

/** `NAME=value` (a shell or an env file) or `NAME` in backticks or a table's first cell. */
const VAR_SET = /(?:^|[\s`(])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=/g;
const VAR_CODE = /`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=[^`]*)?`/g;

const SOURCE_DIRS = ['src', 'bench', 'scripts', 'test', 'examples', 'deploy', 'bin', 'sql', 'migrations', 'packages'];
const SOURCE_FILES = ['Dockerfile', 'docker-compose.yml', 'package.json'];

function sourceText(): string {
  const parts: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(ts|tsx|js|mjs|cjs|sh|sql|ya?ml|json|conf|ini|toml|env)$|Dockerfile$/.test(name) && !full.endsWith(path.join('test', 'docs', 'docs-match-code.test.ts'))) parts.push(readFileSync(full, 'utf8'));
    }
  };
  for (const d of SOURCE_DIRS) walk(path.join(ROOT_DIR, d));
  for (const f of SOURCE_FILES) parts.push(read(f));
  return parts.join('\n');
}

// ---- the checks ------------------------------------------------------------------------------

const show = (m: Mention) => `${m.file}:${m.line} ${m.text}`;

describe('the docs name only what the code has', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv();
  });
  afterAll(() => env?.close());

  it('every METHOD /api/… route in README.md and docs/*.md is a registered route', () => {
    const routes = routesOf(env.app);
    const found = mentions(ROUTE_MENTION, (m) => `${m[1]} ${m[2]}`);
    expect(found.length).toBeGreaterThan(100);
    const has = (method: string, doc: Array<string | null>) =>
      routes.some((r) => (r.method === method || (method === 'HEAD' && r.method === 'GET')) && matchesRoute(doc, r.url));
    // Each method serves one of the path's forms, and each form is served by one of the methods
    // (`GET|PUT|DELETE …/oidc[/:providerId]`: the list, and one provider).
    const missing = found.filter(({ text }) => {
      if (NOT_ROUTES.has(text)) return false;
      const [list, raw] = text.split(' ') as [string, string];
      const methods = list.split('|');
      const variants = docPathVariants(raw);
      return !(methods.every((m) => variants.some((v) => has(m, v))) && variants.every((v) => methods.some((m) => has(m, v))));
    });
    expect(missing.map(show)).toEqual([]);
  });

  it('every environment variable they name is in the configuration reference or read by the repo', () => {
    const reference = new Set(CONFIG_REFERENCE.flatMap((v) => v.names));
    const source = sourceText();
    const named = [...mentions(VAR_SET, (m) => m[1]), ...mentions(VAR_CODE, (m) => m[1])];
    expect(named.length).toBeGreaterThan(50);
    const unknown = named.filter(({ text }) => !reference.has(text) && !NOT_VARIABLES.has(text) && !new RegExp(`\\b${text}\\b`).test(source));
    expect(unknown.map(show)).toEqual([]);
  });
});

/**
 * Where reads go with `DATABASE_READ_URL`: README's row (src/config-reference.ts) and
 * docs/scaling.md say the same as the code. The modules that call `db.replicaRead` are listed
 * here with the words the docs use for them; a new caller fails until the docs name it.
 */
const REPLICA_READERS = new Map<string, string[]>([
  ['src/modules/data/read-service.ts', ['lists', 'counts', 'gets']],
  ['src/modules/logs/service.ts', ['request log']],
]);
const PRIMARY_ONLY = ['aggregates', 'schema', 'regex filters'];

describe('the docs say where reads go as the code routes them', () => {
  const callers = (dir: string): string[] =>
    readdirSync(path.join(ROOT_DIR, dir)).flatMap((name) => {
      const rel = `${dir}/${name}`;
      if (statSync(path.join(ROOT_DIR, rel)).isDirectory()) return callers(rel);
      return /\.ts$/.test(name) && /\.replicaRead\(/.test(read(rel)) ? [rel] : [];
    });
  const readme = CONFIG_REFERENCE.find((v) => v.names.includes('DATABASE_READ_URL'))!.meaning;
  const scaling = /## Read replicas[^\n]*\n\n([\s\S]*?)\n\n/.exec(read('docs/scaling.md'))![1]!.replace(/\s+/g, ' ');

  it('the modules reading through db.replicaRead are the ones listed here', () => {
    expect(callers('src/modules').sort()).toEqual([...REPLICA_READERS.keys()].sort());
  });

  it("README's DATABASE_READ_URL row names what goes to the replicas and what stays on the primary", () => {
    const [toReplica = '', toPrimary = ''] = readme.split(/go to them/);
    for (const words of REPLICA_READERS.values()) for (const w of words) expect(toReplica, w).toContain(w);
    for (const w of PRIMARY_ONLY) {
      expect(toReplica, `${w} said to go to the replica`).not.toContain(w);
      expect(toPrimary, w).toContain(w);
    }
  });

  it('docs/scaling.md names every replica read, and keeps aggregates on the primary', () => {
    const [toReplica = '', toPrimary = ''] = scaling.split(/stay on the primary/);
    for (const words of REPLICA_READERS.values()) for (const w of words) expect(toReplica, w).toContain(w);
    expect(toReplica.trimEnd()).toMatch(/aggregates\)$/);
    expect(toPrimary).not.toBe('');
  });

  it('no doc says a get by id ignores Plinth-Commit-Position (getDocument passes it on)', () => {
    const service = read('src/modules/data/read-service.ts');
    // getDocument is getDocumentTagged without the ETag; both reads of one document pass it on.
    expect(/export async function getDocument\([\s\S]*?\n}\n/.exec(service)![0]).toContain('getDocumentTagged(');
    for (const fn of ['getDocumentTagged', 'getDocumentJson']) {
      expect(new RegExp(`export async function ${fn}\\([\\s\\S]*?\\n}\\n`).exec(service)![0], fn).toContain('access.after');
    }
    const claims = mentions(/get by id ignores|ignores the header|a get by id ignores `Plinth-Commit-Position`/i, (m) => m[0]);
    expect(claims.map(show)).toEqual([]);
  });
});

describe('the docs check itself', () => {
  it('reads parameters as :name, {name} or <name>, concrete values, optional parts and rests', () => {
    const ok = (doc: string, route: string) => docPathVariants(doc).every((d) => matchesRoute(d, route));
    expect(ok('/api/data/:c/:id', '/api/data/:collectionName/:id')).toBe(true);
    expect(ok('/api/data/{collection}/{id}', '/api/data/:collectionName/:id')).toBe(true);
    expect(ok('/api/data/<collection>/<id>', '/api/data/:collectionName/:id')).toBe(true);
    expect(ok('/api/data/notes/:id', '/api/data/:collectionName/:id')).toBe(true);
    expect(ok('/api/data/:c?search=<text>', '/api/data/:collectionName')).toBe(true);
    expect(ok('/api/projects/:projectId/byok.', '/api/projects/:projectId/byok')).toBe(true);
    expect(docPathVariants('/api/data/:c[/:id]')).toHaveLength(2);
    expect(docPathVariants('/api/mail/webhook[?projectId=…]')).toEqual([['api', 'mail', 'webhook'], ['api', 'mail', 'webhook']]);
    expect(ok('/api/data/...', '/api/data/:collectionName')).toBe(true);
    expect(ok('/api/data/:c/nothing', '/api/data/:collectionName/:id/restore')).toBe(false);
    expect(ok('/api/projects/:id/usage', '/api/projects/:projectId')).toBe(false);
    expect(ok('/api/projects/:id', '/api/projects/:projectId/usage')).toBe(false);
  });
});
