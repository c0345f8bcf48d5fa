/**
 * `npm run example -- <name>`: runs one of the example apps in examples/ against a throwaway
 * Plinth. Starts Plinth (`node bin/plinth.js`, embedded PostgreSQL) on a free port with a fresh
 * data dir, sets the project up through the dashboard API as the app's developer would
 * (examples/lib/provision.ts), serves the app's static files and prints its URL. Ctrl-C, at any
 * point (also during the start-up, also twice), stops Plinth and its PostgreSQL and deletes the
 * cluster and the data dir. EXAMPLE_WEBHOOK_URL adds the app's webhook endpoints.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { blog } from '../examples/blog/setup.js';
import { board } from '../examples/board/setup.js';
import { chat } from '../examples/chat/setup.js';
import type { ExampleSpec } from '../examples/lib/provision.js';
import { provision } from '../examples/lib/provision.js';
import { serveExample } from '../examples/lib/serve.js';
import { destroyEmbeddedCluster, freePort } from '../src/db/embedded.js';
import { ROOT_DIR } from '../src/paths.js';

const EXAMPLES = new Map<string, ExampleSpec>([['blog', blog], ['board', board], ['chat', chat]]);

async function waitHealthy(base: string, child: ReturnType<typeof spawn>): Promise<void> {
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error(`Plinth exited with code ${child.exitCode}`);
    const ok = await fetch(`${base}/api/health`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('Plinth did not become healthy in 120 s');
}

/** What has been started so far: what `stop` undoes. */
const running: { dataDir?: string; child?: ChildProcess; exited?: Promise<void> } = {};
let stopping: Promise<never> | undefined;

/**
 * Stops Plinth (SIGTERM; SIGKILL after 60 s), then any PostgreSQL of its cluster still running,
 * deletes the cluster (as root it lives outside the data dir) and the data dir, and exits. Safe
 * at any point of the start-up and idempotent: a second Ctrl-C waits for the first one's clean-up.
 */
function stop(code: number): Promise<never> {
  stopping ??= (async () => {
    const { child, exited, dataDir } = running;
    if (child && exited && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(killer);
    }
    if (dataDir) {
      await destroyEmbeddedCluster(dataDir).catch((err: unknown) => console.error(err instanceof Error ? err.message : err));
      rmSync(dataDir, { recursive: true, force: true });
    }
    process.exit(code);
  })();
  return stopping;
}
// Before anything is made: a Ctrl-C during the start-up must find its handler.
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

async function main(): Promise<void> {
  const name = process.argv[2] ?? '';
  const spec = EXAMPLES.get(name);
  if (!spec) {
    console.error(`usage: npm run example -- <name>   (one of: ${[...EXAMPLES.keys()].join(', ')})`);
    process.exit(2);
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `plinth-example-${name}-`));
  running.dataDir = dataDir;
  const port = await freePort();
  if (stopping) return;
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [path.join(ROOT_DIR, 'bin', 'plinth.js')], {
    cwd: ROOT_DIR,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir, LOG_FORMAT: 'json', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  running.child = child;
  running.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  await waitHealthy(base, child);
  const config: Record<string, unknown> = {};
  const site = await serveExample(path.join(ROOT_DIR, 'examples', name), config, Number(process.env.EXAMPLE_PORT ?? 0));
  const project = await provision(base, spec, { siteUrl: site.url, webhookUrl: process.env.EXAMPLE_WEBHOOK_URL });
  Object.assign(config, { baseUrl: base, publishableKey: project.publishableKey });
  console.log(`\nThe ${name} example is running:\n  App:      ${site.url}\n  Plinth:   ${base}  (console: ${base}/_/)\n` +
    `  Operator: ${project.operatorEmail} / ${project.operatorPassword} (throwaway; the project "${spec.project}" is set up)\n` +
    (project.webhookSecrets.length ? `  Webhook secret: ${project.webhookSecrets[0]}\n` : '') +
    `  Data:     ${dataDir} (deleted on Ctrl-C)\n`);
}

main().catch((err: unknown) => {
  // Plinth exiting because it was being stopped is no error; any other failure cleans up too.
  if (stopping) return;
  console.error(err instanceof Error ? err.message : err);
  void stop(1);
});
