// Types of scripts/build-ui.mjs for the TypeScript tests that call it.
export interface UiMetafile {
  outputs: Record<string, { bytes: number; inputs?: Record<string, unknown>; imports: Array<{ path: string; kind: string }>; entryPoint?: string; cssBundle?: string }>;
}
export function initialChunks(metafile: UiMetafile, entry: string): string[];
export function buildUi(options?: { outdir?: string; minify?: boolean }): Promise<{ outdir: string; entry: string; metafile: UiMetafile }>;
