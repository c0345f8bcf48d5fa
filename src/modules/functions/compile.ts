/**
 * Deploy-time compilation: esbuild bundles a function's module (JavaScript or TypeScript) into
 * one script that assigns its exports to the unit global the sandbox reads (guest-prelude.ts).
 * A module is self-contained: an `import` of anything (Node's modules, packages) fails here,
 * with esbuild's message and position, not at the first invocation.
 */
import { createHash } from 'node:crypto';
import { build, type Message } from 'esbuild';
import { FunctionErrors } from './errors.js';
import { UNIT_GLOBAL } from './sandbox/guest-prelude.js';

export const MAX_SOURCE_BYTES = 256 * 1024;
export const MAX_COMPILED_BYTES = 1024 * 1024;

export interface Compiled {
  code: string;
  hash: string;
}

export async function compileFunction(source: string, language: 'js' | 'ts'): Promise<Compiled> {
  // The ESM build names the module's exports (an IIFE's metafile does not); the IIFE is what runs.
  const esm = await bundle(source, language, 'esm');
  const exports = Object.values(esm.metafile.outputs)[0]?.exports ?? [];
  if (!exports.includes('default')) throw FunctionErrors.function_compile_failed('The module must have a default export: the function Plinth calls.');
  const iife = await bundle(source, language, 'iife');
  const code = iife.outputFiles[0]?.text ?? '';
  if (!code.startsWith(`var ${UNIT_GLOBAL} = `)) throw FunctionErrors.function_compile_failed();
  if (Buffer.byteLength(code) > MAX_COMPILED_BYTES) throw FunctionErrors.function_compile_failed(`The compiled function is larger than ${MAX_COMPILED_BYTES} bytes.`);
  return { code, hash: createHash('sha256').update(code).digest('hex') };
}

async function bundle(source: string, language: 'js' | 'ts', format: 'esm' | 'iife') {
  try {
    return await build({
      stdin: { contents: source, loader: language, sourcefile: `function.${language}` },
      bundle: true,
      write: false,
      format,
      globalName: format === 'iife' ? UNIT_GLOBAL : undefined,
      platform: 'neutral',
      target: 'es2023',
      metafile: true,
      logLevel: 'silent',
      legalComments: 'none',
      charset: 'utf8',
    });
  } catch (err) {
    throw FunctionErrors.function_compile_failed(describe((err as { errors?: Message[] }).errors ?? []));
  }
}

function describe(errors: Message[]): string {
  if (errors.length === 0) return 'The function does not compile.';
  return errors
    .slice(0, 5)
    .map((e) => (e.location ? `line ${e.location.line}, column ${e.location.column + 1}: ${e.text}` : e.text))
    .join('; ');
}
