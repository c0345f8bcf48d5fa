/**
 * `npm run bench`: runs each domain benchmark in its own process, one after another (they
 * share the machine's two cores, so never in parallel), and prints their tables.
 * `npm run bench -- data auth` runs only those.
 *
 * Opt-in (never in the default run; name them): `pooler` (PgBouncer in transaction mode
 * against PostgreSQL directly) and `replica` (reads on a streaming standby against the primary
 * alone), on Debian's PostgreSQL 15 and PgBouncer (docs/scaling.md "Benchmarks: pooler and
 * replica"); like the other files not in ALL (`cluster`, `data-1m`, …), they run only when named.
 * `soak` (30 minutes of mixed traffic on one node, minute by minute: does anything grow?) is
 * opt-in too (docs/benchmarks.md, "soak").
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const ALL = ['peers', 'data', 'client', 'rules', 'realtime', 'webhooks', 'aggregate', 'batch', 'search', 'auth', 'mfa', 'storage', 'files', 'mail', 'backup'];
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = wanted.length ? wanted : ALL;

let failed = 0;
for (const name of names) {
  const file = path.join(here, `${name}.ts`);
  if (!existsSync(file)) {
    console.log(`\n## ${name}: no benchmark (bench/${name}.ts missing)`);
    continue;
  }
  console.log(`\n## ${name}\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', file], { stdio: 'inherit', env: { ...process.env, LOG_LEVEL: 'warn' } });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
