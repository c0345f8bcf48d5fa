/**
 * `plinth types` (issue 48): the CLI, run as a user runs it (`node bin/plinth.js types …`),
 * writes a .d.ts of a running project's collections, from the dashboard API and from the
 * secret key; a fixture app typed with it compiles, and each wrong field, missing required
 * field, disallowed value or unknown collection in `wrong.ts` is a compile error (tsc).
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signOperatorToken } from '../../src/modules/operators/tokens.js';
import { ROOT_DIR } from '../../src/paths.js';
import { runPlinth, type Running } from './helpers.js';

const run = promisify(execFile);
let r: Running;
const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-types-'));

beforeAll(async () => {
  r = await runPlinth();
  await r.collection({
    name: 'posts',
    schema: [
      { key: 'title', type: 'String', required: true },
      { key: 'views', type: 'Number' },
      { key: 'status', type: 'String', enum: ['draft', 'published'] },
      { key: 'author', type: 'Ref', ref: 'users' },
      { key: 'publishedAt', type: 'Date' },
      { key: 'meta', type: 'Object', fields: [{ key: 'pinned', type: 'Boolean' }] },
      { key: 'tags', type: 'Array', items: { type: 'String' } },
    ],
  });
  await r.collection({ name: 'comments', schema: [{ key: 'body', type: 'String', required: true }, { key: 'post', type: 'Ref', ref: 'posts', required: true }] });
});
afterAll(async () => {
  await r.env.close();
  rmSync(dir, { recursive: true, force: true });
});

function plinthTypes(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT_DIR, 'bin', 'plinth.js'), 'types', ...args], { cwd: dir });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += String(c)));
    child.stderr.on('data', (c) => (err += String(c)));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

async function tsc(files: string[]): Promise<{ code: number; out: string }> {
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [],
      lib: ['ES2022', 'DOM'], paths: { '@plinth/client': [path.join(ROOT_DIR, 'packages/client/src/index.ts')] }, allowImportingTsExtensions: true,
    },
    files,
  };
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  try {
    const { stdout } = await run(process.execPath, [path.join(ROOT_DIR, 'node_modules/typescript/bin/tsc'), '-p', dir]);
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, out: e.stdout };
  }
}

describe('plinth types', () => {
  it('from the dashboard API: every collection, fields, required, allowed values, references', async () => {
    const token = await signOperatorToken(r.env.ctx.config.dashboardJwtSecret, r.p.owner.id, r.env.ctx.clock.now());
    const res = await plinthTypes(['--url', r.url, '--token', token, '--project', r.p.id, '--out', 'plinth-schema.d.ts']);
    expect(res.err).toBe('');
    expect(res.code).toBe(0);
    const text = readFileSync(path.join(dir, 'plinth-schema.d.ts'), 'utf8');
    expect(text).toContain('title: string;');
    expect(text).toContain('views?: number;');
    expect(text).toContain('status?: "draft" | "published";');
    expect(text).toContain('author?: Ref<"users">;');
    expect(text).toContain('post: Ref<"posts">;');
    expect(text).toMatch(/meta\?: \{\n\s+pinned\?: boolean;\n\s+\};/);
    expect(text).toContain('tags?: Array<string>;');
    expect(text).toMatch(/export type Schema = \{\n {2}comments: Comments;\n {2}posts: Posts;\n\};/); // users left out
  });

  it('from the secret key, for the named collections, to stdout', async () => {
    const res = await plinthTypes(['--url', r.url, '--secret-key', r.p.secretKey, '--collections', 'posts', '--out', '-']);
    expect(res.code).toBe(0);
    expect(res.out).toContain('export type Posts = {');
    expect(res.out).not.toContain('type Comments');
    const bad = await plinthTypes(['--url', r.url, '--secret-key', r.p.secretKey, '--collections', 'nope', '--out', '-']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('404');
  });

  it('a fixture app compiles with the generated types, and every wrong field is a compile error', async () => {
    const token = await signOperatorToken(r.env.ctx.config.dashboardJwtSecret, r.p.owner.id, r.env.ctx.clock.now());
    expect((await plinthTypes(['--url', r.url, '--token', token, '--project', r.p.id])).code).toBe(0);
    cpSync(path.join(ROOT_DIR, 'test/client/fixture-app'), dir, { recursive: true });
    const good = await tsc(['app.ts']);
    expect(good.out).toBe('');
    expect(good.code).toBe(0);
    const wrong = await tsc(['wrong.ts']);
    expect(wrong.code).not.toBe(0);
    const lines = readFileSync(path.join(dir, 'wrong.ts'), 'utf8').split('\n');
    const expected = lines.flatMap((l, i) => (/\/\/ E\d/.test(l) ? [i + 1] : []));
    const failing = [...new Set([...wrong.out.matchAll(/wrong\.ts\((\d+),/g)].map((m) => Number(m[1])))];
    expect(failing.sort((a, b) => a - b)).toEqual(expected);
  }, 60_000);
});
