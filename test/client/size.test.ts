/**
 * The client's size budget (issue 48): the core (`@plinth/client`: auth + data) at most 12 KB
 * and everything (core, realtime, files, mail, functions) at most 30 KB, minified by esbuild and
 * gzipped, every export used. Also checks the features are separate: an app that imports only
 * the core ships none of realtime's or files' code.
 */
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(__dirname, '../../packages/client/src');

async function bundle(code: string): Promise<{ min: string; gz: number }> {
  const out = await build({
    stdin: { contents: code, resolveDir: SRC, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2020',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  const min = out.outputFiles[0]!.text;
  return { min, gz: gzipSync(min, { level: 9 }).length };
}

const kb = (n: number) => `${(n / 1024).toFixed(2)} KB`;

describe('client size', () => {
  it('core ≤ 12 KB and the whole ≤ 30 KB (min+gzip); features are tree-shaken apart', async () => {
    const core = await bundle(`export * from './index.ts';`);
    const whole = await bundle(`export * from './index.ts'; export * from './realtime.ts'; export * from './files.ts'; export * from './mail.ts'; export * from './functions.ts'; export * from './mfa.ts';`);
    const onlyList = await bundle(`import { createClient } from './index.ts'; createClient({ url: 'x', apiKey: 'y' }).collection('a').list();`);
    console.log(`@plinth/client min+gzip: core ${kb(core.gz)} (${kb(core.min.length)} min), whole ${kb(whole.gz)} (${kb(whole.min.length)} min)`);
    expect(core.gz).toBeLessThanOrEqual(12 * 1024);
    expect(whole.gz).toBeLessThanOrEqual(30 * 1024);
    expect(onlyList.min).not.toContain('/api/realtime');
    expect(onlyList.min).not.toContain('/api/storage');
    expect(onlyList.min).not.toContain('/api/mail');
  });
});
