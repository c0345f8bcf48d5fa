/**
 * `npm start`: embedded PostgreSQL when DATABASE_URL is unset, migrations, the in-process job
 * worker and the HTTP server. SIGINT/SIGTERM stop accepting, drain in-flight requests, stop
 * the worker and the database, then exit.
 */
import { loadConfig, ConfigError } from './config.js';
import { boot } from './boot.js';
import { printBanner } from './banner.js';
import { EmbeddedPostgresError } from './db/embedded.js';
import { buildApp } from './server.js';
import { startWorker } from './worker/runner.js';
import { startMetricsListener } from './modules/metrics/listener.js';
import { startDispatcher } from './modules/webhooks/dispatcher.js';

/**
 * SIGINT/SIGTERM are ours from the first line: one arriving during start-up (the embedded
 * PostgreSQL starting, migrations running) is remembered, start-up stops at the next step, and
 * whatever was started is stopped; a second signal changes nothing (Node's default would kill
 * the process and leave the postmaster, in its own process group, running).
 */
let stopSignal: string | undefined;
let shutdown: ((signal: string) => Promise<void>) | undefined;
const onSignal = (signal: string) => {
  if (shutdown) void shutdown(signal);
  else stopSignal ??= signal;
};
process.on('SIGINT', () => onSignal('SIGINT'));
process.on('SIGTERM', () => onSignal('SIGTERM'));

async function main(): Promise<void> {
  const started = Date.now();
  const config = loadConfig();
  const booted = await boot(config);
  const { ctx } = booted;
  if (stopSignal) {
    ctx.log.info({ signal: stopSignal }, 'stopped during start-up');
    await booted.close().catch(() => {});
    process.exit(0);
  }
  const app = await buildApp(ctx);
  const worker = config.runWorker ? await startWorker(ctx) : undefined;
  // webhooks reach their endpoints within a second of a commit, from the first one after a start
  const dispatcher = worker ? startDispatcher(ctx) : undefined;
  const metrics = config.metrics.port ? await startMetricsListener(ctx, config.metrics.port) : undefined;
  await app.listen({ port: config.port, host: config.host });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}`;

  let stopping = false;
  shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000 + config.shutdownDrainMs);
    force.unref();
    // Readiness first: /readyz answers 503 for SHUTDOWN_DRAIN_MS while requests are still served,
    // so load balancers take this node out before its listener closes.
    ctx.lifecycle.draining = true;
    if (config.shutdownDrainMs > 0) await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
    await app.close().catch(() => {});
    await dispatcher?.stop().catch(() => {});
    await worker?.stop().catch(() => {});
    await metrics?.close().catch(() => {});
    await booted.close().catch(() => {});
    process.exit(0);
  };
  // A signal during the steps since boot: stop what they started.
  if (stopSignal) return shutdown(stopSignal);
  // Announced only once the signals are handled: whoever waits for the banner may stop us at once.
  printBanner(config, ctx.log, { url, embedded: !!booted.embedded, readyMs: Date.now() - started, worker: !!worker });
  if (config.rateLimitScale === 0) ctx.log.warn('RATE_LIMIT_SCALE=0: ALL RATE LIMITS ARE OFF. Use this for benchmarks only.');
}

main().catch((err) => {
  // Start-up failed because it was being stopped (the terminal's Ctrl-C also reaches initdb):
  // not an error. What boot started cleans up after itself, the postmaster at exit.
  if (stopSignal) process.exit(0);
  if (err instanceof ConfigError) console.error(err.message);
  else {
    // The message first (it names the cause and the fix); the stack only for the unexpected.
    console.error(`Plinth failed to start: ${err instanceof Error ? err.message : String(err)}`);
    if (err instanceof Error && !(err instanceof EmbeddedPostgresError) && err.stack) console.error(err.stack);
  }
  process.exit(1);
});
