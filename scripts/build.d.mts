// Types of scripts/build.mjs for the TypeScript tests that call it.
export interface BuildResult {
  /** The version directory `dist` now points to. */
  dir: string;
  /** False when the sources were unchanged and nothing was built. */
  built: boolean;
}

export function build(options?: { link?: string; force?: boolean }): Promise<BuildResult>;
