/**
 * `plinth migrate`: applies graphile-worker's schema, migrations/ and sql/ (under the same
 * advisory lock as every start-up), then exits 0. For deployments that migrate before rolling
 * out new nodes. Without DATABASE_URL it migrates the embedded database in the data directory.
 *
 * `plinth migrate --status`: changes nothing; prints every migration the database applied, with
 * the checksum recorded when it was applied, against this version's files (src/db/migration-status.ts),
 * then exits 0 when in sync, 3 on drift (a file changed after it was applied, an applied
 * migration this version has no file for, one without a recorded checksum), 4 when migrations
 * are only pending (docs/deploy.md).
 */
import { loadConfig, ConfigError } from '../config.js';
import { migrate, MIGRATIONS_DIR } from '../db/migrate.js';
import { migrationStatus } from '../db/migration-status.js';
import { EXIT_DRIFT, EXIT_PENDING, formatStatus } from './migrate-status.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../db/embedded.js';
import { describeDatabase } from '../banner.js';
import { createLogger } from '../lib/logger.js';
import pg from 'pg';

async function status(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const s = await migrationStatus(client, MIGRATIONS_DIR);
    process.stdout.write(formatStatus(s) + '\n');
    return s.drift ? EXIT_DRIFT : s.inSync ? 0 : EXIT_PENDING;
  } finally {
    await client.end();
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(3);
  const config = loadConfig();
  const log = createLogger(config.logLevel, undefined, config.logFormat);
  let embedded: EmbeddedDatabase | undefined;
  try {
    const url = config.databaseDirectUrl ?? config.databaseUrl ?? (embedded = await startEmbeddedPostgres(config.dataDir)).url;
    if (args.includes('--status')) return await status(url);
    const started = Date.now();
    await migrate(url, (m) => log.debug(m), undefined, (detail, m) => log.warn(detail, m));
    log.info({ database: describeDatabase(config, !!embedded), ms: Date.now() - started }, 'migrations applied');
    return 0;
  } finally {
    await embedded?.stop().catch(() => {});
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof ConfigError ? err.message : `plinth migrate failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
