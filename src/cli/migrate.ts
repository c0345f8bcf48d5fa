/**
 * `plinth migrate`: applies graphile-worker's schema, migrations/ and sql/ (under the same
 * advisory lock as every start-up), then exits 0. For deployments that migrate before rolling
 * out new nodes. Without DATABASE_URL it migrates the embedded database in the data directory.
 */
import { loadConfig, ConfigError } from '../config.js';
import { migrate } from '../db/migrate.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../db/embedded.js';
import { describeDatabase } from '../banner.js';
import { createLogger } from '../lib/logger.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, undefined, config.logFormat);
  let embedded: EmbeddedDatabase | undefined;
  try {
    const url = config.databaseDirectUrl ?? config.databaseUrl ?? (embedded = await startEmbeddedPostgres(config.dataDir)).url;
    const started = Date.now();
    await migrate(url, (m) => log.debug(m), undefined, (detail, m) => log.warn(detail, m));
    log.info({ database: describeDatabase(config, !!embedded), ms: Date.now() - started }, 'migrations applied');
  } finally {
    await embedded?.stop().catch(() => {});
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof ConfigError ? err.message : `plinth migrate failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
