/**
 * The error catalogue is one public list: a code means one thing with one status everywhere,
 * clients can match on it, and docs/errors.md is that list. These tests fail when a domain
 * defines a code another domain already owns, when a route builds an error outside the
 * catalogue, or when the page drifts from the code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError, defineErrors, ERROR_CODE_PATTERN } from '../../src/lib/errors.js';
import { definingFiles, docPath, loadCatalogue, renderErrorsDoc, root } from '../../scripts/errors-doc.js';

describe('error catalogue', () => {
  it('every code is defined once across all domains, snake_case, with one 4xx/5xx status', async () => {
    const entries = await loadCatalogue();
    const codes = entries.map((e) => e.code);
    expect(codes.length).toBeGreaterThan(100);
    expect(new Set(codes).size).toBe(codes.length);
    for (const e of entries) {
      expect(e.code).toMatch(ERROR_CODE_PATTERN);
      expect(e.status).toBeGreaterThanOrEqual(400);
      expect(e.status).toBeLessThan(600);
    }
  });

  it('a second definition of a code by another domain is refused when the module loads', async () => {
    await loadCatalogue();
    expect(() => defineErrors('duplicate-test', { collection_not_found: { status: 400, message: 'shadow' } })).toThrow(
      /collection_not_found.*defined twice/,
    );
  });

  it('a code keeps its status: only passthrough codes take a status at throw time', async () => {
    const { Errors } = await import('../../src/lib/errors.js');
    expect(() => Errors.not_found(undefined, undefined, { status: 400 })).toThrow(/one status/);
    const { providerError } = await import('../../src/modules/mail/errors.js');
    expect(providerError(422, 'bad address')).toMatchObject({ code: 'mail_provider_error', status: 422, message: 'bad address' });
    expect(providerError(null, '')).toMatchObject({ code: 'mail_provider_error', status: 502 });
  });

  it('no source file builds an AppError with a code of its own outside the catalogue', () => {
    expect(definingFiles().length).toBeGreaterThan(10);
    const offenders = scan(join(root, 'src'))
      .filter((f) => !f.endsWith(join('lib', 'errors.ts')))
      .filter((f) => /new AppError\(\s*['"`]/.test(readFileSync(join(root, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('docs/errors.md is the rendering of the catalogue (npm run docs:errors)', async () => {
    expect(readFileSync(docPath, 'utf8')).toBe(renderErrorsDoc(await loadCatalogue()));
  });

  it('an error keeps code, status and headers when a batch or import names where it happened', () => {
    const err = new AppError('rate_limited', 429, 'slow down', { 'retry-after': '3' }, { a: 1 });
    expect(err.withMessage('Operation 2: slow down', { a: 1, operation: 2 })).toMatchObject({
      code: 'rate_limited',
      status: 429,
      headers: { 'retry-after': '3' },
      extra: { a: 1, operation: 2 },
      message: 'Operation 2: slow down',
    });
  });
});

function scan(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}
