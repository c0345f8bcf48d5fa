/**
 * The start-up banner: the first thing `npm start` / `plinth` prints once it listens (where,
 * the console, the docs, where the data is, which database). A readable block on a terminal
 * (LOG_FORMAT=pretty), one structured log line otherwise so JSON logs stay parseable.
 */
import type { Logger } from 'pino';
import type { Config } from './config.js';

export interface BannerFacts {
  /** The base URL the server answers on (the bound port, `localhost` for 0.0.0.0). */
  url: string;
  embedded: boolean;
  readyMs: number;
  worker: boolean;
}

/** The database as `host:port/name`, never its password. */
export function describeDatabase(config: Config, embedded: boolean): string {
  if (embedded || !config.databaseUrl) return `embedded PostgreSQL (${config.dataDir}/pg)`;
  try {
    const u = new URL(config.databaseUrl);
    return `external PostgreSQL (${u.host}${u.pathname})`;
  } catch {
    return 'external PostgreSQL';
  }
}

export function bannerFields(config: Config, facts: BannerFacts) {
  const consoleServed = config.dashboard && config.routes !== 'public';
  return {
    url: facts.url,
    console: consoleServed ? `${facts.url}/_/` : undefined,
    docs: `${facts.url}/docs`,
    health: `${facts.url}/api/health`,
    dataDir: config.dataDir,
    database: describeDatabase(config, facts.embedded),
    worker: facts.worker ? 'in this process' : 'separate (PLINTH_RUN_WORKER=false)',
    readyMs: facts.readyMs,
  };
}

export function printBanner(config: Config, log: Logger, facts: BannerFacts): void {
  const f = bannerFields(config, facts);
  if (config.logFormat === 'json') {
    log.info(f, 'Plinth is listening');
    return;
  }
  const rows: Array<[string, string | undefined]> = [
    ['Console', f.console],
    ['API docs', f.docs],
    ['Health', f.health],
    ['Data', f.dataDir],
    ['Database', f.database],
    ['Jobs', f.worker],
  ];
  const lines = [`Plinth is listening on ${f.url}  (ready in ${f.readyMs} ms)`];
  for (const [label, value] of rows) if (value) lines.push(`  ${(label + ':').padEnd(10)}${value}`);
  console.log(lines.join('\n') + '\n');
}
