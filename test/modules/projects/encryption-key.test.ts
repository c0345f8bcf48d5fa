/**
 * Threat: a node started with another ENCRYPTION_KEY than the database's (a new data dir pointed
 * at an existing DATABASE_URL, a key typo on one node). Without a check it starts, then every
 * sign-in of every project answers 500 on a JWT secret that no longer opens; the node must
 * instead refuse to start and name the cause. A node with the right key starts as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot } from '../../../src/boot.js';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject } from '../../helpers/fixtures.js';

let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv();
  await makeProject(env.ctx);
});
afterAll(() => env.close());

const configWith = (key: string) =>
  loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', PLINTH_DATA_DIR: env.config.dataDir, DATABASE_URL: env.databaseUrl, ENCRYPTION_KEY: key });

describe('start-up with the database of another ENCRYPTION_KEY', () => {
  it('refuses to start, naming ENCRYPTION_KEY, instead of answering 500 on every sign-in', async () => {
    const start = boot(configWith('0f'.repeat(32)), { skipMigrations: true, clock: env.clock });
    await expect(start).rejects.toThrow(ConfigError);
    await expect(start).rejects.toThrow(/ENCRYPTION_KEY does not open the secrets already in this database/);
  });

  it('starts with the key the database was created with', async () => {
    const node = await boot(configWith(env.config.encryptionKey.toString('hex')), { skipMigrations: true, clock: env.clock });
    await node.close();
  });
});
