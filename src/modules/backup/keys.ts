/**
 * A project's backup key: 32 random bytes made with its first backup, stored AES-256-GCM
 * encrypted with ENCRYPTION_KEY (src/lib/crypto.ts) in backup_keys, and only ever decrypted in
 * memory to seal or open a stored backup (src/lib/sealed-stream.ts). Never logged, never sent.
 */
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { BackupErrors } from './errors.js';
import * as bq from './backup-queries.js';

function open(ctx: AppContext, sealed: Parameters<typeof decrypt>[1]): Buffer {
  const text = decrypt(ctx.config.encryptionKey, sealed);
  const key = text === null ? null : Buffer.from(text, 'base64');
  if (!key || key.length !== 32) throw BackupErrors.backup_unreadable('The project\'s backup key cannot be decrypted with this server\'s ENCRYPTION_KEY.');
  return key;
}

/** The project's key, made (once, whoever asks first) when it has none. */
export async function projectKey(ctx: AppContext, projectId: string): Promise<Buffer> {
  let sealed = await bq.backupKeyOf(ctx.db.admin, projectId);
  if (!sealed) {
    await bq.insertBackupKey(ctx.db.admin, projectId, encrypt(ctx.config.encryptionKey, randomBytes(32).toString('base64')), ctx.clock.now());
    sealed = await bq.backupKeyOf(ctx.db.admin, projectId);
  }
  return open(ctx, sealed);
}

/** The key of an existing backup's project (it has one: the backup was sealed with it). */
export async function existingKey(ctx: AppContext, projectId: string): Promise<Buffer> {
  return open(ctx, await bq.backupKeyOf(ctx.db.admin, projectId));
}
