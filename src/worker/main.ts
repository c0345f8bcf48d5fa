/**
 * `plinth worker` / `npm run worker`: a job-only process (any number of them) on the same
 * database as the API nodes. Needs DATABASE_URL. It rides out database outages like an API
 * node (runner.ts); with METRICS_PORT it answers /metrics, /livez and /readyz on loopback.
 */
import { loadConfig, ConfigError } from '../config.js';
import { boot } from '../boot.js';
import { startWorker } from './runner.js';
import { startMetricsListener, type Readiness } from '../modules/metrics/listener.js';
import { startDispatcher } from '../modules/webhooks/dispatcher.js';

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.databaseUrl) throw new ConfigError('Invalid configuration: DATABASE_URL is required for a separate worker process');
  const booted = await boot(config);
  const worker = await startWorker(booted.ctx);
  // webhooks reach their endpoints within a second of a commit, from the first one after a start
  const dispatcher = startDispatcher(booted.ctx);
  const ready = (): Readiness => {
    if (booted.ctx.lifecycle.draining) return { ok: false, reason: 'shutting_down' };
    const h = worker.health();
    return h.ok ? { ok: true } : { ok: false, reason: h.reason! };
  };
  const metrics = config.metrics.port ? await startMetricsListener(booted.ctx, config.metrics.port, { ready }) : undefined;
  const stop = async () => {
    booted.ctx.lifecycle.draining = true;
    await dispatcher.stop().catch(() => {});
    await worker.stop().catch(() => {});
    await metrics?.close().catch(() => {});
    await booted.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  // Announced only once the signals are handled: whoever waits for this line may stop us at once.
  booted.ctx.log.info({ concurrency: config.workerConcurrency }, `Plinth worker running (concurrency ${config.workerConcurrency})`);
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
