/**
 * Starts the test PostgreSQL once for the whole run: TEST_DATABASE_URL when set (a server
 * where we may create databases), else an embedded PostgreSQL in a temp dir. Migrates a
 * template database; each test file then gets its own copy (see ./context.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { prepareDatabase } from '../../src/boot.js';
import { build } from '../../scripts/build.mjs';

let embedded: EmbeddedDatabase | undefined;
let dir: string | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // dist/ as `npm run build` makes it (~1 s, nothing when unchanged): the console for the tests
  // that serve it, the bundles for the tests that run `plinth`.
  await build();
  let templateUrl: string;
  if (process.env.TEST_DATABASE_URL) {
    templateUrl = withDatabase(process.env.TEST_DATABASE_URL, `plinth_tpl_${process.pid}`);
    await recreate(process.env.TEST_DATABASE_URL, new URL(templateUrl).pathname.slice(1));
  } else {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-test-'));
    embedded = await startEmbeddedPostgres(dir, 'plinth_template');
    templateUrl = embedded.url;
  }
  await prepareDatabase(templateUrl);
  project.provide('templateUrl', templateUrl);
  return async () => {
    // destroy, not stop: as root the cluster lives outside `dir` (under /var/lib/plinth).
    await embedded?.destroy().catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = '/' + database;
  return u.toString();
}

async function recreate(adminUrl: string, database: string): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  await client.end();
}

declare module 'vitest' {
  export interface ProvidedContext {
    templateUrl: string;
  }
}
