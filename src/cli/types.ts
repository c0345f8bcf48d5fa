/**
 * `plinth types [--url URL] (--token T --project ID | --secret-key SK --collections a,b) [--out FILE]`:
 * writes the TypeScript declaration of a project's collections (src/cli/schema-types.ts) to FILE
 * (default plinth-schema.d.ts), or to stdout with `--out -`. Options may come from the
 * environment: PLINTH_URL, PLINTH_TOKEN, PLINTH_PROJECT, PLINTH_SECRET_KEY.
 */
import { writeFileSync } from 'node:fs';
import { fetchSchemas, renderTypes } from './schema-types.js';

function args(argv: string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument "${a}"`);
    const eq = a.indexOf('=');
    if (eq > 0) m.set(a.slice(2, eq), a.slice(eq + 1));
    else m.set(a.slice(2), argv[++i] ?? '');
  }
  return m;
}

async function main(): Promise<void> {
  const a = args(process.argv.slice(3));
  const url = a.get('url') ?? process.env.PLINTH_URL ?? 'http://127.0.0.1:3000';
  const source = {
    url,
    token: a.get('token') ?? process.env.PLINTH_TOKEN,
    project: a.get('project') ?? process.env.PLINTH_PROJECT,
    secretKey: a.get('secret-key') ?? process.env.PLINTH_SECRET_KEY,
    collections: a.get('collections')?.split(',').map((s) => s.trim()).filter(Boolean),
  };
  const collections = await fetchSchemas(source);
  const text = renderTypes(collections, source.project ? `project ${source.project} at ${url}` : url);
  const out = a.get('out') ?? 'plinth-schema.d.ts';
  if (out === '-') process.stdout.write(text);
  else {
    writeFileSync(out, text);
    console.log(`plinth types: ${collections.length} collection(s) → ${out}`);
  }
}

main().catch((err: unknown) => {
  console.error(`plinth types: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
