/**
 * The start-up check that ENCRYPTION_KEY is the key this database's secrets were sealed with.
 *
 * Project JWT secrets, provider credentials and MFA secrets are stored encrypted under
 * ENCRYPTION_KEY (lib/crypto.ts). Outside production the key is generated into the data dir
 * when none is given, so pointing a new data dir (or another machine) at an existing
 * DATABASE_URL silently brings a new key: every sign-in would then fail on a secret that no
 * longer opens. Refusing to start, with the cause named, is the only honest answer.
 */
import type { Kysely } from 'kysely';
import { ConfigError } from '../../config.js';
import type { Database } from '../../database.js';
import { decrypt } from '../../lib/crypto.js';
import { newestProjectSecret } from './queries.js';

export async function checkEncryptionKey(db: Kysely<Database>, key: Buffer): Promise<void> {
  const row = await newestProjectSecret(db);
  if (!row || decrypt(key, row.jwt_secret) !== null) return;
  throw new ConfigError(
    `Invalid configuration: ENCRYPTION_KEY does not open the secrets already in this database (project ${row.id}). ` +
      'Start with the ENCRYPTION_KEY this database was created with (outside production it is kept in ' +
      '<PLINTH_DATA_DIR>/secrets/encryption_key.hex); docs/deploy.md, "Secrets".',
  );
}
