/**
 * `plinth functions deploy <folder>` and `plinth functions list` as a user runs them
 * (`node bin/plinth.js functions ...`, the built bundle) against a listening Plinth: a folder
 * deployed twice (the second run changes nothing: no new version), then a changed file (a new
 * version), a refused source (the server's code and message, exit 1), bad usage (exit 2), and
 * both ways of signing in (PLINTH_TOKEN, PLINTH_EMAIL + PLINTH_PASSWORD).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeProject, type TestProject } from '../helpers/fixtures.js';
import { createCollection } from '../modules/data/helpers.js';
import { ROOT_DIR } from '../../src/paths.js';

const BIN = path.join(ROOT_DIR, 'bin', 'plinth.js');
const folder = mkdtempSync(path.join(os.tmpdir(), 'plinth-fn-deploy-'));
let env: TestEnv;
let p: TestProject;
let url: string;

function plinth(args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT_DIR,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PLINTH_URL: url, PLINTH_PROJECT: p.id, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += String(c)));
    child.stderr.on('data', (c) => (err += String(c)));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}
const asToken = () => ({ PLINTH_TOKEN: p.owner.token });
const asPassword = () => ({ PLINTH_EMAIL: p.owner.email, PLINTH_PASSWORD: p.owner.password });

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

const write = (file: string, text: string) => writeFileSync(path.join(folder, file), text);

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  env = await createTestEnv({ PUBLIC_URL: url, RATE_LIMIT_SCALE: '100', LOG_LEVEL: 'warn' });
  await env.app.listen({ port, host: '127.0.0.1' });
  p = await makeProject(env.ctx);
  await createCollection(env, p, 'notes', [{ key: 'text', type: 'String' }]);
  write('plinth.functions.json', JSON.stringify([
    { name: 'hello', kind: 'http', file: 'hello.ts' },
    { name: 'stamp', kind: 'before', trigger: { collection: 'notes', events: ['create'] }, file: 'stamp.js' },
  ]));
  write('hello.ts', `export default async (req: { query: { name?: string } }) => ({ hello: req.query.name ?? 'world', v: 1 });\n`);
  write('stamp.js', `export default async (event) => { console.log(event.event); };\n`);
}, 120_000);
afterAll(async () => {
  await env?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('plinth functions', { timeout: 120_000 }, () => {
  it('deploys a folder, then finds it unchanged, then deploys a changed file as a new version', async () => {
    const first = await plinth(['functions', 'deploy', folder], asPassword());
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain('hello: created, version 1');
    expect(first.out).toContain('stamp: created, version 1');
    const hello = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/functions/hello`, headers: p.owner.auth });
    expect(hello.json().data).toMatchObject({ language: 'ts', kind: 'http', version: 1 });
    expect((await env.app.inject({ method: 'GET', url: '/api/functions/hello?name=cli', headers: p.pk })).json()).toEqual({ hello: 'cli', v: 1 });

    const second = await plinth(['functions', 'deploy', folder], asToken());
    expect(second.code, second.err).toBe(0);
    expect(second.out).toContain('hello: unchanged, version 1');
    expect(second.out).toContain('stamp: unchanged, version 1');
    expect((await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/functions/hello`, headers: p.owner.auth })).json().data.versions).toBe(1);

    write('hello.ts', `export default async (req: { query: { name?: string } }) => ({ hello: req.query.name ?? 'world', v: 2 });\n`);
    const third = await plinth(['functions', 'deploy', folder], asToken());
    expect(third.code, third.err).toBe(0);
    expect(third.out).toContain('hello: deployed version 2');
    expect(third.out).toContain('stamp: unchanged, version 1');
    expect((await env.app.inject({ method: 'GET', url: '/api/functions/hello', headers: p.pk })).json()).toEqual({ hello: 'world', v: 2 });

    const listed = await plinth(['functions', 'list'], asToken());
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(/hello\s+http\s+\{\}\s+v2\/2\s+enabled/);
    expect(listed.out).toMatch(/stamp\s+before/);
  });

  it('a refused source: the server\'s code and message, exit 1, the other functions still deployed', async () => {
    write('stamp.js', `export default async (event) => {\n`);
    write('hello.ts', `export default async () => ({ v: 3 });\n`);
    const run = await plinth(['functions', 'deploy', folder], asToken());
    expect(run.code).toBe(1);
    expect(run.out).toContain('stamp: failed: function_compile_failed:');
    expect(run.out).toContain('hello: deployed version 3');
    expect(run.err).toContain('1 of 2 failed');
  });

  it('bad credentials, a missing project and bad usage are refused', async () => {
    const wrong = await plinth(['functions', 'list'], { PLINTH_EMAIL: p.owner.email, PLINTH_PASSWORD: 'wrong password!' });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/plinth functions: \w+: /);
    const none = await plinth(['functions', 'list']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('PLINTH_TOKEN');
    const usage = await plinth(['functions', 'deploy']);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain('Usage: plinth functions deploy <folder>');
    const missing = await plinth(['functions', 'deploy', path.join(folder, 'nope')], asToken());
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('manifest_invalid');
  });
});
