/**
 * `npm pack` of packages/client gives an installable tarball (issue 48): built ES modules and
 * type declarations only, no dependencies; installed into an empty app, every entry point
 * imports in Node and type-checks under NodeNext resolution.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/paths.js';

const run = promisify(execFile);
const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-pack-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm pack', () => {
  it('an installable tarball whose entry points import and type-check', async () => {
    const pkg = path.join(ROOT_DIR, 'packages/client');
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: pkg });
    const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = info!.files.map((f) => f.path).sort();
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/realtime.js');
    expect(files.filter((f) => f.startsWith('src/'))).toEqual([]);

    const app = path.join(dir, 'app');
    await run('mkdir', ['-p', app]);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--offline', path.join(dir, info!.filename)], { cwd: app });
    const probe = `import { createClient, CLIENT_VERSION } from '@plinth/client';
import { realtime } from '@plinth/client/realtime';
import { files } from '@plinth/client/files';
import { mail } from '@plinth/client/mail';
import { functions } from '@plinth/client/functions';
import { mfa } from '@plinth/client/mfa';
const c = createClient({ url: 'http://127.0.0.1:1', apiKey: 'pk_live_x', auth: { storage: 'memory' } });
console.log(CLIENT_VERSION, typeof realtime(c).subscribe, typeof files(c).upload, typeof mail(c).send, typeof functions(c).invoke, typeof mfa(c).registerPasskey);
`;
    writeFileSync(path.join(app, 'probe.mjs'), probe);
    const out = await run(process.execPath, ['probe.mjs'], { cwd: app });
    expect(out.stdout.trim()).toBe('0.1.0 function function function function function');

    writeFileSync(path.join(app, 'probe.ts'), probe.replace("{ storage: 'memory' }", "{ storage: 'memory' as const }") + 'export {};\n');
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, lib: ['ES2022', 'DOM'], types: [] }, files: ['probe.ts'] }),
    );
    const tsc = await run(process.execPath, [path.join(ROOT_DIR, 'node_modules/typescript/bin/tsc'), '-p', app]).catch((e: { stdout: string }) => e);
    expect(tsc.stdout).toBe('');
  }, 120_000);
});
